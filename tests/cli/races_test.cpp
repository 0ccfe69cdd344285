// Races between driftwatch processes on one data directory: a rebuild while
// two identical evaluations run on the build it replaces, and an evaluation
// SIGKILLed and rerun at once.
#include <doctest/doctest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/support/sweep_project.h"

using testing::Project;
namespace fs = std::filesystem;

namespace {

/// Processes whose command line holds every one of `needles` (driftwatch itself left out).
std::vector<std::string> processes_with(const std::vector<std::string>& needles) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    auto name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    auto cmd = common::proc_file(std::stol(name), "cmdline");  // empty once it has exited
    for (auto& c : cmd)
      if (c == '\0') c = ' ';
    bool all = cmd.find(DRIFTWATCH_BIN) == std::string::npos;
    for (const auto& n : needles) all = all && cmd.find(n) != std::string::npos;
    if (all) out.push_back(name + ": " + cmd.substr(0, 160));
  }
  return out;
}

void wait_for(const std::vector<std::string>& needles, common::Child& owner) {
  bool seen = false;
  for (int i = 0; i < 6000 && !seen && !owner.try_wait(); ++i) {
    seen = !processes_with(needles).empty();
    if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE_MESSAGE(seen, "no process with " << needles.front() << " appeared");
}

common::Child start(Project& p, std::vector<std::string> args) {
  common::ProcessSpec spec;
  spec.argv = p.args(std::move(args), p.dsn);
  spec.argv.insert(spec.argv.begin(), DRIFTWATCH_BIN);
  spec.timeout = std::chrono::minutes(5);
  return common::Child::start(spec).take();
}

std::string policy_file() {
  return std::string(DRIFTWATCH_SOURCE_DIR) + "/samples/policies/sample-compiler-v1.0.policy";
}

}  // namespace

TEST_CASE("a rebuild while two identical evaluations run on that build removes nothing they use, and the old build is collected after them") {
  Project p;
  auto data = (p.dir / "data").string();
  // The sample compiler's recipe with a slow last step: the rebuild is still
  // running (and its old entry would be gone) while the evaluations go on.
  std::ifstream in(std::string(DRIFTWATCH_SOURCE_DIR) + "/samples/recipes/sample-compiler.toml");
  std::string recipe_text((std::istreambuf_iterator<char>(in)), {});
  auto at = recipe_text.find("command = \"ninja -C {build} -j {jobs}\"");
  REQUIRE(at != std::string::npos);
  recipe_text.insert(at + std::string("command = \"ninja -C {build} -j {jobs}").size(), " && sleep 4.321");
  recipe_text.replace(recipe_text.find("name = \"sample-compiler\""), 24, "name = \"slow-sample\"");
  auto recipe = (p.dir / "slow.toml").string();
  std::ofstream(recipe) << recipe_text;
  auto built = p.run({"build", "--repo", p.repo, "--recipe", recipe, "--commit", "main", "-j", "2"});
  REQUIRE_MESSAGE(built.exit_code == 0, built.output);

  std::vector<std::string> eval = {"eval",    "--repo",  p.repo,        "--build", "main", "--recipe", recipe,
                                   "--suite", "testdata", "--policy", policy_file(), "-j",    "1"};
  auto first = start(p, eval);
  auto second = start(p, eval);
  // Each has started compiling in its own scratch directory; then both pause.
  for (auto* e : {&first, &second}) wait_for({data + "/eval/", "-" + std::to_string(e->pid()) + "-"}, *e);
  kill(first.pid(), SIGSTOP);
  kill(second.pid(), SIGSTOP);
  auto rebuild = start(p, {"build", "--repo", p.repo, "--recipe", recipe, "--commit", "main", "-j", "2", "--rebuild"});
  wait_for({"sleep 4.321"}, rebuild);  // the rebuild is under way: its new build is not in place yet
  kill(first.pid(), SIGCONT);
  kill(second.pid(), SIGCONT);
  for (auto* e : {&first, &second}) {
    auto r = e->wait();
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK(r.output.find("matches or beats the default on") != std::string::npos);
    CHECK(r.output.find("failed") == std::string::npos);
  }
  auto rebuilt = rebuild.wait();
  INFO(rebuilt.output);
  CHECK(rebuilt.exit_code == 0);
  CHECK(rebuilt.output.find(": ok in") != std::string::npos);
  CHECK(p.psql("SELECT status || ' ' || count(*) FROM evaluations GROUP BY status") == "done 1");
  CHECK(p.psql("SELECT count(*) FROM module_results WHERE outcome <> 'ok'") == "0");

  // One generation is left: the new one, which the entry names.
  std::vector<fs::path> entries, generations;
  for (const auto& recipe_dir : fs::directory_iterator(p.dir / "data/cache"))
    for (const auto& e : fs::directory_iterator(recipe_dir.path()))
      (e.path().filename().string().find(".gen-") != std::string::npos ? generations : entries).push_back(e.path());
  REQUIRE(entries.size() == 1);
  REQUIRE(generations.size() == 1);
  CHECK(fs::is_symlink(entries[0]));
  CHECK(fs::read_symlink(entries[0]) == generations[0].filename());
  CHECK(fs::exists(entries[0] / "artifacts/dwcc"));
}

TEST_CASE("an evaluation SIGKILLed and rerun at once: the killed run's compiles die with it and the rerun's modules are all ok") {
  Project p;
  auto data = (p.dir / "data").string();
  // The sample compiler as a prebuilt toolchain: no build needed here.
  auto toolchain = p.dir / "toolchain";
  fs::create_directories(toolchain / "bin");
  fs::copy_file(DWCC_BIN, toolchain / "bin" / "dwcc");
  std::vector<std::string> eval = {"eval",     "--build",     toolchain.string(), "--suite", "testdata",
                                   "--policy", policy_file(), "-j",               "2"};
  auto killed = start(p, eval);
  auto mine = std::vector<std::string>{data + "/eval/", "-" + std::to_string(killed.pid()) + "-"};
  wait_for(mine, killed);
  kill(killed.pid(), SIGKILL);
  CHECK(killed.wait().signal == SIGKILL);
  // Its compiles die with it (PR_SET_PDEATHSIG), not after finishing their
  // work; on a loaded machine their exit may take a moment to show.
  auto left = processes_with(mine);
  for (int i = 0; i < 30 && !left.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    left = processes_with(mine);
  }
  std::string joined;
  for (const auto& l : left) joined += l + "\n";
  CHECK_MESSAGE(left.empty(), joined);
  auto again = p.run(eval);
  INFO(again.output);
  CHECK(again.exit_code == 0);
  CHECK(again.output.find("matches or beats the default on") != std::string::npos);
  CHECK(again.output.find("failed") == std::string::npos);
  CHECK(p.psql("SELECT count(*) FROM module_results WHERE outcome <> 'ok'") == "0");
}
