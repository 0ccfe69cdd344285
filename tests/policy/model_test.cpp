// The LibTorch policy and its file: round trip, strict loading.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "common/hash.h"
#include "policy/model.h"
#include "tests/support/policy_file.h"
#include "tests/support/temp_dir.h"

using namespace policy;
namespace fs = std::filesystem;

namespace {

PolicyMetadata metadata() {
  PolicyMetadata m;
  m.name = "test-policy";
  m.features = {"sroa_savings", "callee_users", "cost_estimate"};
  m.mean = {0.5, 1.0, 2.0};
  m.scale = {1.0, 2.0, 3.0};
  m.hidden = {8, 8};
  m.compiler_repo = "/srv/compiler";
  m.compiler_commit = "0123456789abcdef0123456789abcdef01234567";
  m.corpus = "train@abcd";
  m.seed = 7;
  m.training = R"({"method": "test"})";
  return m;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

}  // namespace

TEST_CASE("a policy round-trips through its file with every score and all metadata") {
  testing::TempDir dir;
  auto model = PolicyModel::create(metadata());
  REQUIRE(model.save(dir / "p.policy").ok());
  auto loaded = PolicyModel::load(dir / "p.policy");
  REQUIRE_MESSAGE(loaded.ok(), loaded.error().message);
  const auto& m = loaded->metadata();
  CHECK(m.name == "test-policy");
  CHECK(m.features == metadata().features);
  CHECK(m.mean == metadata().mean);
  CHECK(m.scale == metadata().scale);
  CHECK(m.hidden == std::vector<int>{8, 8});
  CHECK(m.compiler_commit == metadata().compiler_commit);
  CHECK(m.corpus == "train@abcd");
  CHECK(m.seed == 7);
  CHECK(m.training == R"({"method": "test"})");
  CHECK_FALSE(m.created.empty());
  CHECK(m.content_hash.size() == 64);
  CHECK(m.content_hash == model.metadata().content_hash);
  for (float x : {-2.0f, 0.0f, 0.7f, 3.0f}) {
    float in[3] = {x, -x, x * 2};
    CHECK(loaded->score(in) == model.score(in));
  }
}

TEST_CASE("the same seed gives the same network") {
  auto a = PolicyModel::create(metadata()), b = PolicyModel::create(metadata());
  auto other = metadata();
  other.seed = 8;
  auto c = PolicyModel::create(other);
  float in[3] = {0.3f, -1.0f, 2.0f};
  CHECK(a.score(in) == b.score(in));
  CHECK(a.score(in) != c.score(in));
}

TEST_CASE("corrupt, truncated and foreign files are refused naming the problem") {
  testing::TempDir dir;
  auto model = PolicyModel::create(metadata());
  REQUIRE(model.save(dir / "good.policy").ok());
  auto good = read(dir / "good.policy");

  write(dir / "truncated.policy", good.substr(0, good.size() / 2));
  CHECK(PolicyModel::load(dir / "truncated.policy").error().message.find("truncated") != std::string::npos);

  auto flipped = good;
  flipped[flipped.size() / 2] ^= 0x20;
  write(dir / "flipped.policy", flipped);
  CHECK(PolicyModel::load(dir / "flipped.policy").error().message.find("content hash mismatch") != std::string::npos);

  write(dir / "foreign.policy", "PK\x03\x04 a zip file, say a TorchScript archive");
  CHECK(PolicyModel::load(dir / "foreign.policy").error().message.find("not a driftwatch policy file") !=
        std::string::npos);

  CHECK(PolicyModel::load(dir / "absent.policy").error().message.find("no such file") != std::string::npos);

  write(dir / "trailing.policy", good + "extra");
  CHECK(PolicyModel::load(dir / "trailing.policy").error().message.find("unexpected bytes") != std::string::npos);
}

TEST_CASE("a file whose normalization divides by zero or holds NaN is refused, not served as \"never inline\"") {
  testing::TempDir dir;
  for (auto [mean, scale] : {std::pair{0.5, 0.0}, std::pair{0.5, -1.0}, std::pair{std::nan(""), 1.0},
                             std::pair{0.5, std::numeric_limits<double>::infinity()}}) {
    auto meta = metadata();
    meta.mean[1] = mean;
    meta.scale[1] = scale;
    auto model = PolicyModel::create(meta);
    REQUIRE(model.save(dir / "bad.policy").ok());
    auto r = PolicyModel::load(dir / "bad.policy");
    REQUIRE_FALSE(r.ok());
    if (std::isfinite(mean) && std::isfinite(scale))  // JSON writes NaN and infinity as null: refused as incomplete
      CHECK(r.error().message == "cannot load policy " + (dir / "bad.policy").string() +
                                     ": its normalization of feature callee_users is not a finite mean and a "
                                     "positive scale");
  }
}

TEST_CASE("a file whose metadata describes another network than its weights is refused on load") {
  testing::TempDir dir;
  REQUIRE(PolicyModel::create(metadata()).save(dir / "p.policy").ok());
  // torch::load takes the file's tensors whatever their shape: without the
  // check this loaded, and every compile then failed on a size mismatch.
  write(dir / "hidden.policy", testing::edited_policy(read(dir / "p.policy"), "\"hidden\": [\n    8,", "\"hidden\": [\n    4,"));
  auto r = PolicyModel::load(dir / "hidden.policy");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "cannot load policy " + (dir / "hidden.policy").string() +
                                 ": its weights do not fit the 3-4-8-2 network its metadata describes");
}

TEST_CASE("a file of another kind is refused even with a valid hash") {
  testing::TempDir dir;
  auto meta = metadata();
  auto model = PolicyModel::create(meta);
  REQUIRE(model.save(dir / "p.policy").ok());
  write(dir / "kind.policy", testing::edited_policy(read(dir / "p.policy"), "driftwatch-inline-policy", "driftwatch-evict--policy"));
  auto r = PolicyModel::load(dir / "kind.policy");
  REQUIRE_FALSE(r.ok());
  // Past the hash check, refused by the kind check.
  CHECK(r.error().message.find("content hash mismatch") == std::string::npos);
  CHECK(r.error().message.find("it is not an inlining policy (kind 'driftwatch-evict--policy')") != std::string::npos);
}

TEST_CASE("transform_feature compresses magnitudes symmetrically") {
  CHECK(transform_feature(0) == 0);
  CHECK(transform_feature(-1) == -transform_feature(1));
  CHECK(transform_feature(1000) < 7.0);
}

TEST_CASE("metadata of the wrong type is refused naming the field, not only the JSON type") {
  testing::TempDir dir;
  REQUIRE(PolicyModel::create(metadata()).save(dir / "p.policy").ok());
  auto good = read(dir / "p.policy");
  auto refused = [&](const std::string& from, const std::string& to) {
    write(dir / "bad.policy", testing::edited_policy(good, from, to));
    auto r = PolicyModel::load(dir / "bad.policy");
    REQUIRE_FALSE(r.ok());
    return r.error().message.substr(r.error().message.find(": ") + 2);
  };
  // Edits of the same length (the helper keeps the layout's sizes).
  CHECK(refused("\"driftwatch-inline-policy\"", "5                         ") == "it is not an inlining policy (kind 5)");
  CHECK(refused("\"format\": 1", "\"format\":[]") == "it has format [], this driftwatch reads 1");
  CHECK(refused("\"seed\": 7", "\"seed\":{}") == "its metadata field 'seed' is not a whole number (it holds object)");
  CHECK(refused("\"hidden\": [\n    8,", "\"hidden\": [\n  \"8\",") ==
        "its metadata field 'hidden' is not a list of whole numbers (it holds array)");
  CHECK(refused("\"seed\": 7", "\"sowd\": 7") == "its metadata has no field 'seed'");
  CHECK(refused("\"name\": \"test-p", "\"name\": \"\\u001b") ==
        "its metadata holds control characters (a name, repository, check-in, corpus, date or feature)");
}
