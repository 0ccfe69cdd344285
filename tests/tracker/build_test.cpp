// Real builds of the sample compiler across a scripted eight-week history.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "builder/recipe.h"
#include "tests/support/temp_dir.h"
#include "tracker/checkin_build.h"
#include "tracker/sample_history.h"
#include "tracker/selection.h"

using namespace tracker;
namespace fs = std::filesystem;

namespace {

GitRepo eight_weeks(const testing::TempDir& dir) {
  SampleHistoryOptions o;
  o.start = default_sample_start();
  o.history_file = fs::path(DRIFTWATCH_SOURCE_DIR) / "tests/data/history-8w.toml";
  write_sample_history(dir / "repo", o).take();
  return GitRepo::open(dir / "repo").take();
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("the eight-week history samples as expected") {
  testing::TempDir dir;
  auto repo = eight_weeks(dir);
  auto all = select_commits(repo, {}).take();
  CHECK(all.size() == 8);  // main branch only; the merge once
  RangeOptions weekly;
  weekly.sampling.every = Every{2, PeriodUnit::Week};
  CHECK(select_commits(repo, weekly).take().size() == 4);
  RangeOptions tags;
  tags.sampling.tags = true;
  auto tagged = select_commits(repo, tags).take();
  REQUIRE(tagged.size() == 2);
  CHECK(tagged[0].tags.front() == "v1.0");
  CHECK(tagged[1].tags.front() == "v1.1");
}

TEST_CASE("building the weeks: incremental, failures recorded, the walk goes on, the cache serves") {
  testing::TempDir dir;
  auto repo = eight_weeks(dir);
  auto recipe = builder::load_recipe("sample-compiler").take();
  auto commits = select_commits(repo, {}).take();
  REQUIRE(commits.size() == 8);
  CheckinBuildOptions options{dir / "data", 2, false};

  std::vector<CheckinBuild> builds;
  for (const auto& c : commits) builds.push_back(build_checkin(repo, recipe, c, options).take());

  // Every check-in but the broken rename builds; the walk went past it.
  for (size_t i = 0; i < builds.size(); ++i) {
    INFO(commits[i].subject, " ", builds[i].result.message);
    bool broken = commits[i].subject.find("Rename buildAndRunPipeline") != std::string::npos;
    CHECK(builds[i].result.outcome == (broken ? builder::Outcome::BuildFailed : builder::Outcome::Ok));
  }
  const auto& broken = builds[3];
  CHECK(broken.result.message.find("runPipeline") != std::string::npos);
  CHECK(broken.result.log_tail.find("error") != std::string::npos);
  CHECK(broken.result.artifacts.empty());

  // The first build configures; the others reuse the work tree.
  CHECK(builds[0].result.configured);
  CHECK_FALSE(builds[1].result.configured);
  // Docs-only check-in: one file written, nothing recompiled.
  CHECK(builds[1].checkout.written == 1);
  CHECK(read(builds[1].result.log).find("Building CXX") == std::string::npos);
  // The threshold change recompiles what includes Heuristic.h, not the rest.
  auto log2 = read(builds[2].result.log);
  CHECK(log2.find("Heuristic.cpp.o") != std::string::npos);
  CHECK(log2.find("Emit.cpp.o") == std::string::npos);
  CHECK(builds[2].checkout.written == 1);

  // Artifacts live in the cache, one per (commit, recipe).
  auto compiler = builds[2].result.artifacts.at("compiler");
  CHECK(fs::exists(compiler));
  CHECK(compiler.string().find(commits[2].sha) != std::string::npos);
  CHECK(builds[2].result.artifacts.at("compiler") != builds[0].result.artifacts.at("compiler"));

  // A second build of the same check-ins is served from the cache, failures included.
  auto again = build_checkin(repo, recipe, commits[2], options).take();
  CHECK(again.result.from_cache);
  CHECK(again.result.artifacts.at("compiler") == compiler);
  auto broken_again = build_checkin(repo, recipe, commits[3], options).take();
  CHECK(broken_again.result.from_cache);
  CHECK(broken_again.result.outcome == builder::Outcome::BuildFailed);
}

TEST_CASE("a build that runs past the recipe's timeout is killed with its whole process group") {
  testing::TempDir dir;
  auto repo = eight_weeks(dir);
  auto recipe = builder::parse_recipe(R"(
name = "sleepy"
timeout = "2s"
[build]
command = "sleep 30 & sleep 30; echo never"
[artifacts]
compiler = "bin/dwcc"
)",
                                      "sleepy.toml")
                    .take();
  auto commit = repo.commit("main").take();
  auto start = std::chrono::steady_clock::now();
  auto b = build_checkin(repo, recipe, commit, {dir / "data", 1, false}).take();
  auto took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(b.result.outcome == builder::Outcome::Timeout);
  CHECK(b.result.message.find("timed out") == 0);
  CHECK(took < 10);
}

TEST_CASE("a recipe whose artifact is never produced is recorded as missing-artifact") {
  testing::TempDir dir;
  auto repo = eight_weeks(dir);
  auto recipe = builder::parse_recipe(
                    "name = 'nothing'\n[build]\ncommand = 'true'\n[artifacts]\ncompiler = 'bin/nowhere'\n", "n.toml")
                    .take();
  auto b = build_checkin(repo, recipe, repo.commit("main").take(), {dir / "data", 1, false}).take();
  CHECK(b.result.outcome == builder::Outcome::MissingArtifact);
  CHECK(b.result.message.find("bin/nowhere") != std::string::npos);
}

TEST_CASE("a configure step that fails is recorded as configure-failed") {
  testing::TempDir dir;
  auto repo = eight_weeks(dir);
  auto recipe = builder::parse_recipe(
                    "name = 'badconf'\n[configure]\ncommand = 'echo \"CMake Error: no compiler\"; exit 3'\n"
                    "skip_if_exists = 'build.ninja'\n[build]\ncommand = 'true'\n[artifacts]\ncompiler = 'bin/x'\n",
                    "b.toml")
                    .take();
  auto b = build_checkin(repo, recipe, repo.commit("main").take(), {dir / "data", 1, false}).take();
  CHECK(b.result.outcome == builder::Outcome::ConfigureFailed);
  CHECK(b.result.message == "configure exit status 3: CMake Error: no compiler");
}

TEST_CASE("data directories holding a space, a quote or $(…) build the sample compiler and run nothing") {
  testing::TempDir dir;
  auto repo = eight_weeks(dir);
  auto recipe = builder::load_recipe("sample-compiler").take();
  auto commit = repo.commit("main").take();
  auto marker = "/tmp/pwned-" + std::to_string(getpid());
  fs::remove(marker);
  for (std::string name : {std::string("it's a dir"), "$(touch " + marker + ")"}) {
    auto b = build_checkin(repo, recipe, commit, {dir / name, 2, false}).take();
    INFO(name, ": ", b.result.message, "\n", b.result.log_tail);
    CHECK(b.result.outcome == builder::Outcome::Ok);
    CHECK(fs::exists(b.result.artifacts.at("compiler")));
  }
  CHECK_FALSE(fs::exists(marker));
}

TEST_CASE("recipe commands do not see the database DSN or libpq's variables") {
  testing::TempDir dir;
  auto repo = eight_weeks(dir);
  auto recipe = builder::parse_recipe(
                    "name = 'envdump'\n[build]\ncommand = 'mkdir -p {build}/bin && env > {build}/bin/env'\n"
                    "[artifacts]\nenv = 'bin/env'\n",
                    "e.toml")
                    .take();
  setenv("DRIFTWATCH_DB", "host=db.example.org password=hunter2", 1);
  setenv("PGPASSWORD", "hunter2", 1);
  setenv("PGHOST", "db.example.org", 1);
  auto b = build_checkin(repo, recipe, repo.commit("main").take(), {dir / "data", 1, false}).take();
  unsetenv("DRIFTWATCH_DB");
  unsetenv("PGPASSWORD");
  unsetenv("PGHOST");
  REQUIRE(b.result.outcome == builder::Outcome::Ok);
  auto env = read(b.result.artifacts.at("env"));
  CHECK(env.find("PATH=") != std::string::npos);  // the rest of the environment is there
  CHECK(env.find("hunter2") == std::string::npos);
  CHECK(env.find("DRIFTWATCH_DB") == std::string::npos);
  CHECK(env.find("PGHOST") == std::string::npos);
}
