// How training scores a policy on its modules: a failed compile is a loss.
#include <doctest/doctest.h>

#include <fstream>

#include "policy/choosing.h"
#include "policy/training_data.h"
#include "tests/support/temp_dir.h"

using namespace policy;

namespace {

TrainingData two_modules(const testing::TempDir& dir) {
  TrainingData data;
  data.feature_names = {"sroa_savings", "callee_users", "cost_estimate"};
  for (const char* name : {"a", "b"}) {
    auto bitcode = dir.path() / name;
    bitcode += ".bc";
    std::ofstream(bitcode) << "not bitcode: a module the compiler cannot read\n";
    data.modules.push_back({name, bitcode, 100, 100, {}, {}, {}});
  }
  return data;
}

}  // namespace

TEST_CASE("a training rollout whose compile fails counts as a loss, not a tie") {
  testing::TempDir dir;
  auto data = two_modules(dir);
  PolicyMetadata meta;
  meta.name = std::string("training-outcome-test");
  meta.features = data.feature_names;
  meta.mean = {0, 0, 0};
  meta.scale = {1, 1, 1};
  meta.hidden = {4};
  auto model = PolicyModel::create(meta);
  TrainOptions o;
  o.compiler.argv = {DWCC_BIN, "{input}", "-o", "{output}", "-Oz"};  // the real compiler, on unreadable modules
  o.compiler.timeout = std::chrono::seconds(60);
  // Never reached: no compile writes an object.
  o.measure_text = [](const std::filesystem::path&) -> common::Result<std::int64_t> { return std::int64_t{0}; };
  o.work_dir = dir / "work";
  o.jobs = 1;
  auto e = evaluate(model, data, o);
  CHECK(e.ties == 0);
  CHECK(e.losses == 2);
  CHECK(e.failed == 2);
  CHECK(e.no_worse() == 0);                 // counted as ties, the failures made it 100%
  CHECK(e.uplift == doctest::Approx(0.0));  // the failed modules keep the default's size in the figures
}

TEST_CASE("training's figures leave zero-size modules out of the geometric mean") {
  testing::TempDir dir;
  auto data = two_modules(dir);
  data.modules[1].default_text = 0;
  auto e = summarize(data, {50, 0});
  CHECK(e.uplift == doctest::Approx(0.5));  // smoothing would count the empty module as a ratio of 1
  CHECK(e.wins == 1);
  CHECK(e.ties == 1);
  e = summarize(data, {50, 7});
  CHECK(e.uplift == doctest::Approx(0.5));
  CHECK(e.losses == 1);
  auto failed = summarize(data, {100, 0}, {true, false});
  CHECK(failed.losses == 1);
  CHECK(failed.failed == 1);
  CHECK(failed.ties == 1);
}

TEST_CASE("a candidate that made a compile fail is never chosen over one that did not, nor meets the bar") {
  nlohmann::json clean{{"uplift_geomean", 0.004}, {"uplift_total", 0.003}, {"no_worse_share", 0.96}, {"failed", 0}};
  // Its failed module keeps the default's size: its means look better.
  nlohmann::json crashing{{"uplift_geomean", 0.006}, {"uplift_total", 0.005}, {"no_worse_share", 0.96}, {"failed", 1}};
  CHECK(better(clean, crashing));
  CHECK_FALSE(better(crashing, clean));
  CHECK(meets_bar(clean, 0.95));
  CHECK_FALSE(meets_bar(crashing, 0.95));
  // Among clean ones, the bar then the geometric mean decide.
  auto larger = clean;
  larger["uplift_geomean"] = 0.005;
  CHECK(better(larger, clean));
  auto many_losses = larger;
  many_losses["no_worse_share"] = 0.8;
  CHECK(better(clean, many_losses));
  CHECK_FALSE(meets_bar(many_losses, 0.95));
  // Figures kept by an older run, without "failed", count none.
  nlohmann::json older{{"uplift_geomean", 0.004}, {"uplift_total", 0.003}, {"no_worse_share", 0.96}};
  CHECK(meets_bar(older, 0.95));
}
