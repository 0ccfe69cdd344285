// The driftwatch binary loads LibTorch (bin/driftwatch-torch.so) only when a
// command needs the network (policy/torch_backend.h): the real binary, with
// the module it would load replaced by a missing file, a module of another
// build, and a library that is no module.
#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <regex>

#include "common/text.h"
#include "tests/support/policy_file.h"
#include "tests/support/sweep_project.h"

using testing::run_driftwatch;

namespace {

using Env = std::vector<std::pair<std::string, std::string>>;

Env module_at(const std::string& path) { return {{"DRIFTWATCH_TORCH_MODULE", path}}; }

}  // namespace

TEST_CASE("commands that read the database or name a policy run without the LibTorch module") {
  testing::Project p;
  p.make_small();
  p.sweep_ok();
  // decide records the policy as the lineage's root: its network loaded in
  // the sweep's evaluations, so no command here loads it again.
  auto missing = module_at((p.dir / "missing.so").string());
  struct Command {
    std::vector<std::string> args;
    int exit_code;
  };
  const std::vector<Command> commands = {
      {{"alerts", "--config", p.config}, 0},
      // 1: the tests' frozen policy loses on this suite, so the verdict is retrain.
      {{"decide", "--config", p.config, "--json"}, 1},
      {{"jobs"}, 0},
      {{"policy", "list", "--config", p.config}, 0},
      {{"report", "--config", p.config, "--out", (p.dir / "report").string(), "--format", "json,md"}, 0},
  };
  for (const auto& command : commands) {
    auto r = run_driftwatch(p.args(command.args, p.dsn), missing);
    INFO(command.args.front() << ": " << r.output);
    CHECK(r.exit_code == command.exit_code);
    CHECK(r.output.find("LibTorch") == std::string::npos);
  }
  // Times for programs: ISO 8601 UTC, from the database as from the clock.
  const std::regex iso(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)");
  std::ifstream report_file(p.dir / "report" / "report.json");
  auto report = nlohmann::json::parse(report_file);
  CHECK(std::regex_match(report["generated_at"].get<std::string>(), iso));
  REQUIRE(report["decisions"].size() == 1);
  CHECK(std::regex_match(report["decisions"][0]["at"].get<std::string>(), iso));
  auto lineage = nlohmann::json::parse(p.run({"policy", "list", "--config", p.config, "--json"}).output);
  REQUIRE(lineage.size() == 1);
  CHECK(std::regex_match(lineage[0]["created"].get<std::string>(), iso));
  // And a retrain, which would build, stops before it.
  auto builds = p.psql("SELECT count(*) FROM builds");
  auto retrain = run_driftwatch(p.args({"retrain", "--config", p.config}, p.dsn), missing);
  INFO(retrain.output);
  CHECK(retrain.exit_code == 2);
  CHECK(retrain.output.find("cannot find driftwatch's LibTorch module") != std::string::npos);
  CHECK(p.psql("SELECT count(*) FROM builds") == builds);
}

TEST_CASE("a command that needs the network names the module it cannot load in one line before any work") {
  testing::Project p;
  const std::string policy = std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/frozen-test.policy";
  const std::vector<std::string> eval = {"eval",    "--repo",   p.repo,     "--build", "v1.0",
                                         "--suite", "testdata", "--policy", policy};
  struct Case {
    std::string module, says;
  };
  for (const auto& c : {Case{(p.dir / "missing.so").string(), "cannot find driftwatch's LibTorch module"},
                        Case{FAKE_TORCH_MODULE, "comes from another build of driftwatch"},
                        Case{EMPTY_TORCH_MODULE, "not a driftwatch module"}}) {
    auto r = run_driftwatch(p.args(eval, p.dsn), module_at(c.module));
    INFO(r.output);
    CHECK(r.exit_code != 0);
    CHECK(r.output.find(c.says) != std::string::npos);
    CHECK(r.output.find(c.module) != std::string::npos);
    CHECK(common::trim(r.output).find('\n') == std::string::npos);
    // Refused before the compiler was built or anything recorded.
    CHECK(p.psql("SELECT count(*) FROM builds") == "0");
    CHECK(!std::filesystem::exists(p.dir / "data" / "worktrees"));
  }
  // With the module the build has, the same command measures.
  auto ok = p.run(eval);
  INFO(ok.output);
  CHECK(ok.exit_code == 0);
}

TEST_CASE("train and retrain and an evaluating worker stop on a missing LibTorch module before building or recording") {
  testing::Project p;
  auto missing = module_at((p.dir / "missing.so").string());
  const std::vector<std::vector<std::string>> commands = {
      {"train", "--repo", p.repo, "--build", "v1.0", "--suite", "testdata", "--out", (p.dir / "new.policy").string()},
      {"retrain", "--config", p.config},
      {"worker", "--project", "toy", "--idle-exit", "1"},
  };
  for (const auto& command : commands) {
    auto r = run_driftwatch(p.args(command, p.dsn), missing);
    INFO(command.front() << ": " << r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("cannot find driftwatch's LibTorch module") != std::string::npos);
  }
  CHECK(p.psql("SELECT count(*) FROM builds") == "0");
  CHECK(p.psql("SELECT count(*) FROM project_policies") == "0");
  CHECK(!std::filesystem::exists(p.dir / "data" / "worktrees"));  // no compiler checked out, let alone built
  CHECK(!std::filesystem::exists(p.dir / "new.policy"));
  // A worker that only builds needs no network: it starts, finds nothing, leaves.
  auto builder =
      run_driftwatch(p.args({"worker", "--project", "toy", "--kinds", "build", "--idle-exit", "1"}, p.dsn), missing);
  INFO(builder.output);
  CHECK(builder.exit_code == 0);
}

TEST_CASE("a policy whose weights do not fit its metadata is refused before the lineage keeps it or a sweep builds") {
  testing::Project p;
  const std::string frozen = std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/frozen-test.policy";
  std::ifstream in(frozen, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  // Its hash made right again, as another tool would write it: only the
  // network's shape tells.
  auto bad = p.dir / "misfit.policy";
  std::ofstream(bad, std::ios::binary) << testing::edited_policy(text, "  \"hidden\": [\n    64,",
                                                                 "  \"hidden\": [\n    32,");
  p.set(frozen, bad.string());
  for (const auto& command : std::vector<std::vector<std::string>>{{"policy", "list", "--config", p.config},
                                                                   {"sweep", "--config", p.config}}) {
    auto r = p.run(command);
    INFO(command.front() << ": " << r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("its weights do not fit") != std::string::npos);
  }
  CHECK(p.psql("SELECT count(*) FROM project_policies") == "0");
  CHECK(p.psql("SELECT count(*) FROM builds") == "0");
  CHECK(!std::filesystem::exists(p.dir / "data" / "policies"));
}
