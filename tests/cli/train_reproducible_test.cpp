// `driftwatch train` is reproducible: the same inputs, seed and
// SOURCE_DATE_EPOCH give a byte-identical policy file, also when the run is
// killed (SIGTERM, SIGKILL) and resumed with --resume. Real compiles with the
// sample compiler on real C, validation on other files than training.
#include <doctest/doctest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>

#include "tests/support/sweep_project.h"

using testing::Project;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

/// A suite of some of samples/testdata's files, built with clang-19.
void build_suite(Project& p, const std::string& name, std::vector<std::string> files) {
  std::string src = std::string(DRIFTWATCH_SOURCE_DIR) + "/samples/testdata";
  std::string json = "[";
  for (const auto& f : files)
    json += std::string(json.size() > 1 ? "," : "") + "{\"directory\": \"" + src + "\", \"file\": \"" + f +
            ".c\", \"command\": \"cc -O2 -c " + f + ".c\"}";
  auto cc = p.dir / (name + ".json");
  std::ofstream(cc) << json << "]";
  auto r = p.run({"suite", "build", "--from-compile-commands", cc.string(), "--name", name});
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
}

/// The policy's own options: the test runs once per kind of policy.
std::vector<std::string> g_mode;

std::vector<std::string> train_args(const Project& p, const fs::path& out) {
  std::vector<std::string> args = {"train", "--repo", p.repo, "--build", "v1.0", "--suite", "tr", "--validation", "va",
                                   "--out", out.string(), "--name", "repro", "--seed", "7", "--clone-epochs", "5",
                                   "--search-trials", "2", "--imitation-epochs", "5", "--iterations", "4",
                                   "--eval-every", "2", "-j", "2"};
  args.insert(args.end(), g_mode.begin(), g_mode.end());
  return p.args(args, p.dsn);
}

const std::vector<std::pair<std::string, std::string>> kEpoch = {{"SOURCE_DATE_EPOCH", "1767225600"}};

/// Starts a training run, waits until it has checkpointed REINFORCE iteration
/// `iteration` or later, and kills it with `sig`.
void kill_after_checkpoint(const Project& p, const fs::path& out, int iteration, int sig, bool resume) {
  common::ProcessSpec spec;
  spec.argv = train_args(p, out);
  if (resume) spec.argv.push_back("--resume");
  spec.argv.insert(spec.argv.begin(), DRIFTWATCH_BIN);
  spec.env = kEpoch;
  auto child = common::Child::start(spec).take();
  auto checkpoint = p.dir / "data" / "training" / (out.stem().string() + "-7") / "checkpoint.json";
  bool reached = false;
  for (int i = 0; i < 6000 && !reached && !child.try_wait(); ++i) {
    std::ifstream in(checkpoint);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    auto at = text.find("\"iteration\":");
    reached = at != std::string::npos && std::atoi(text.c_str() + at + 12) >= iteration;
    if (!reached) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE_MESSAGE(reached, "the run ended before checkpointing iteration " << iteration);
  kill(child.pid(), sig);
  auto r = child.wait();
  CHECK(r.signal == sig);
  CHECK_FALSE(fs::exists(out));  // nothing half-written
}

}  // namespace

TEST_CASE("train writes a byte-identical policy for the same seed, also after SIGTERM or SIGKILL and --resume") {
  // The shipped policy's kind (residual, a narrower network, weight decay)
  // and the model that decides alone.
  bool residual = false;
  SUBCASE("a residual policy") {
    g_mode = {"--residual-margin", "2", "--hidden", "16,16", "--weight-decay", "1e-4"};
    residual = true;
  }
  SUBCASE("a policy that decides alone") { g_mode = {}; }
  Project p;
  build_suite(p, "tr", {"hashtable", "ini", "json"});
  build_suite(p, "va", {"sort", "utf8"});

  auto straight = p.dir / "straight.policy";
  auto r = testing::run_driftwatch(train_args(p, straight), kEpoch);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("uplift on the validation suite") != std::string::npos);
  CHECK(r.output.find("[margin") != std::string::npos);  // the margin was chosen on validation
  auto info = p.run({"policy", "info", straight.string(), "--json"});
  CHECK(info.output.find("\"chosen_on\": \"validation\"") != std::string::npos);
  CHECK(info.output.find("\"margin_grid\"") != std::string::npos);
  auto features = info.output.substr(info.output.find("\"features\""));
  features = features.substr(0, features.find(']'));
  CHECK(features.find("\"sroa_savings\"") != std::string::npos);
  CHECK(features.find("\"callee_basic_block_count\"") == std::string::npos);  // never an input
  CHECK(info.output.find("\"created\": \"2026-01-01T00:00:00Z\"") != std::string::npos);
  if (residual) {
    CHECK(info.output.find("\"residual_margin\": 2.0") != std::string::npos);
    CHECK(p.run({"policy", "info", straight.string()}).output.find("layers      16-16-2") != std::string::npos);
  }

  // Another run with the same inputs, from nothing: the same bytes. (Once,
  // for the shipped kind: the resumed run below also starts from nothing
  // and must end in the same bytes, for both kinds.)
  if (residual) {
    auto again = p.dir / "again.policy";
    r = testing::run_driftwatch(train_args(p, again), kEpoch);
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    CHECK(slurp(again) == slurp(straight));
  }

  // Killed mid-REINFORCE, by SIGTERM then by SIGKILL, and resumed.
  auto resumed = p.dir / "resumed.policy";
  kill_after_checkpoint(p, resumed, 1, SIGTERM, false);
  kill_after_checkpoint(p, resumed, 2, SIGKILL, true);
  auto args = train_args(p, resumed);
  args.push_back("--resume");
  r = testing::run_driftwatch(args, kEpoch);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  REQUIRE(fs::exists(resumed));
  CHECK(slurp(resumed) == slurp(straight));
}

TEST_CASE("train refuses a validation suite that is the training suite") {
  Project p;
  auto r = p.run({"train", "--repo", p.repo, "--build", "v1.0", "--suite", "testdata", "--validation", "testdata",
                  "--out", (p.dir / "x.policy").string()});
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("must not be the training suite") != std::string::npos);
  CHECK_FALSE(fs::exists(p.dir / "x.policy"));
}

TEST_CASE("train --gate measures every rule of its grid, chooses on validation, and is byte-identical after SIGKILL and --resume") {
  Project p;
  build_suite(p, "tr", {"hashtable", "ini", "json"});
  build_suite(p, "va", {"sort", "utf8"});
  auto args_for = [&](const fs::path& out) {
    return p.args({"train", "--repo", p.repo, "--build", "v1.0", "--suite", "tr", "--validation", "va", "--out",
                   out.string(), "--name", "gate", "--seed", "7", "--gate", "--gate-costs", "5,10",
                   "--gate-callee-users", "2", "--gate-caller-users", "0,2", "-j", "2"},
                  p.dsn);
  };
  auto straight = p.dir / "straight.policy";
  auto r = testing::run_driftwatch(args_for(straight), kEpoch);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("[gate  4/4] cost <= 10, callee users <= 2, caller users >= 2: uplift ") != std::string::npos);
  CHECK(r.output.find(" of 3 modules compiled") != std::string::npos);
  CHECK(r.output.find("gate: ") != std::string::npos);
  CHECK(r.output.find("uplift on the validation suite") != std::string::npos);
  auto info = p.run({"policy", "info", straight.string(), "--json"});
  CHECK(info.output.find("\"chosen_on\": \"validation\"") != std::string::npos);
  for (const char* rule : {"\"cost <= 5, callee users <= 2\"", "\"cost <= 10, callee users <= 2\"",
                           "\"cost <= 5, callee users <= 2, caller users >= 2\"",
                           "\"cost <= 10, callee users <= 2, caller users >= 2\""})
    CHECK_MESSAGE(info.output.find(rule) != std::string::npos, rule);
  auto text = p.run({"policy", "info", straight.string()}).output;
  CHECK(text.find("layers      6-1-2") != std::string::npos);
  CHECK(text.find("\ngate        ") != std::string::npos);
  // The training check-in first; its repository's path is the training machine's.
  CHECK(text.find("\ntrained at  " + p.git({"rev-parse", "v1.0"}) + " (of ") != std::string::npos);
  // The training record in one line for people; its grid is --json's.
  CHECK(text.find("\ntraining    chosen on validation: ") != std::string::npos);
  CHECK(text.find("gate_grid") == std::string::npos);
  // Served as any policy: an evaluation with it runs.
  auto e = p.run({"eval", "--repo", p.repo, "--build", "v1.0", "--suite", "va", "--policy", straight.string()});
  CHECK_MESSAGE(e.exit_code == 0, e.output);

  // Killed once the first rule's figures are kept, and resumed: the same bytes.
  auto resumed = p.dir / "resumed.policy";
  common::ProcessSpec spec;
  spec.argv = args_for(resumed);
  spec.argv.insert(spec.argv.begin(), DRIFTWATCH_BIN);
  spec.env = kEpoch;
  auto child = common::Child::start(spec).take();
  auto kept = p.dir / "data" / "training" / "resumed-7" / "gate" / "train-c5-u2-k0.json";
  bool reached = false;
  for (int i = 0; i < 6000 && !reached && !child.try_wait(); ++i) {
    reached = fs::exists(kept);
    if (!reached) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE_MESSAGE(reached, "the run ended before keeping its first rule's figures");
  kill(child.pid(), SIGKILL);
  child.wait();
  CHECK_FALSE(fs::exists(resumed));
  auto kept_at = fs::last_write_time(kept);
  auto args = args_for(resumed);
  // A network's options mean nothing to a gate: they do not stop the resume.
  for (const char* a : {"--resume", "--hidden", "8", "--imitation-epochs", "3"}) args.push_back(a);
  r = testing::run_driftwatch(args, kEpoch);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(slurp(resumed) == slurp(straight));
  CHECK(fs::last_write_time(kept) == kept_at);  // measured once: the resumed run read it back
  CHECK(r.output.find("[gate  1/4] cost <= 5, callee users <= 2: uplift ") != std::string::npos);
  CHECK(r.output.find("kept from the interrupted run") != std::string::npos);
  // What a gate does read still does.
  args = args_for(resumed);
  for (const char* a : {"--resume", "--gate-costs", "5"}) args.push_back(a);
  r = testing::run_driftwatch(args, kEpoch);
  CHECK(r.exit_code != 0);
  CHECK_MESSAGE(r.output.find("cannot resume") != std::string::npos, r.output);
}

TEST_CASE("train refuses gate thresholds without --gate, and --gate with a warm start") {
  Project p;
  auto out = (p.dir / "x.policy").string();
  auto r = p.run({"train", "--repo", p.repo, "--build", "v1.0", "--suite", "testdata", "--out", out, "--gate-costs",
                  "5"});
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("--gate") != std::string::npos);
  r = p.run({"train", "--repo", p.repo, "--build", "v1.0", "--suite", "testdata", "--out", out, "--gate",
             "--warm-start", out});
  CHECK(r.exit_code != 0);
  CHECK(r.output.find("takes no --warm-start") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
}
