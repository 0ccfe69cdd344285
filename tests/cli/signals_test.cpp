// Ctrl-C (SIGINT) in the middle of a build and of an evaluation: ninja, the
// compilers and the evaluation's compiles go down with driftwatch, the
// evaluation is recorded interrupted, and a rerun succeeds.
#include <doctest/doctest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/support/sweep_project.h"

using testing::Project;

namespace {

/// True when the process is a zombie or has SIGKILL pending: it is already
/// going down, however long a loaded machine takes to tear it down.
bool dying(long pid) {
  std::istringstream in(common::proc_file(pid, "status"));
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("State:") && line.find('Z') != std::string::npos) return true;
    if (line.starts_with("SigPnd:") || line.starts_with("ShdPnd:"))
      if (std::stoull(line.substr(7), nullptr, 16) & (1ull << (SIGKILL - 1))) return true;
  }
  return false;
}

/// Live processes other than `except` whose command line mentions `needle`,
/// or which run in a directory under it (a ninja's compile, whose command
/// line names its files relative to the build directory).
std::vector<std::string> processes_mentioning(const std::string& needle, int except) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    auto name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos || std::stoi(name) == except) continue;
    if (dying(std::stol(name))) continue;
    auto cmd = common::proc_file(std::stol(name), "cmdline");  // empty once it has exited
    for (auto& c : cmd)
      if (c == '\0') c = ' ';
    std::error_code ec;
    auto cwd = std::filesystem::read_symlink(e.path() / "cwd", ec).string();
    if ((cmd.find(needle) != std::string::npos || (!ec && cwd.starts_with(needle))) &&
        cmd.find("driftwatch") == std::string::npos)
      out.push_back(name + ": " + cmd.substr(0, 120) + " (in " + cwd + ")");
  }
  return out;
}

/// Starts driftwatch, waits until a child of it mentions `needle` (and
/// `running`: "-o CMakeFiles/dwcc.dir/" waits for one of ninja's compiles), sends
/// SIGINT, and returns what is still running a moment after driftwatch died.
std::vector<std::string> interrupt(Project& p, std::vector<std::string> args, const std::string& needle,
                                   const std::string& running = "") {
  common::ProcessSpec spec;
  spec.argv = p.args(std::move(args), p.dsn);
  spec.argv.insert(spec.argv.begin(), DRIFTWATCH_BIN);
  // Compiles as long as a cold build's: a cache hit could end before the
  // check below, alive or not.
  spec.env = {{"CCACHE_DISABLE", "1"}};
  auto child = common::Child::start(spec).take();
  bool seen = false;
  for (int i = 0; i < 3000 && !seen && !child.try_wait(); ++i) {
    auto now = processes_mentioning(needle, child.pid());
    seen = std::any_of(now.begin(), now.end(), [&](const auto& l) { return l.find(running) != std::string::npos; });
    if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto why = "no child mentioning " + needle + " " + running + " appeared";
  REQUIRE_MESSAGE(seen, why);
  kill(child.pid(), SIGINT);
  auto r = child.wait();
  CHECK(r.signal == SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  return processes_mentioning(needle, -1);
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

}  // namespace

TEST_CASE("SIGINT during a build and during an evaluation leaves no process behind, the evaluation is recorded interrupted and a rerun succeeds") {
  Project p;
  auto data = (p.dir / "data").string();
  // Stopped while ninja compiles: each compile runs in a process group of
  // its own, which killing ninja's does not reach.
  auto left = interrupt(p, {"build", "--repo", p.repo, "--recipe", "sample-compiler", "--commit", "main", "-j", "2"},
                        data + "/worktrees", "-o CMakeFiles/dwcc.dir/");
  CHECK_MESSAGE(left.empty(), joined(left));
  auto rebuilt = p.run({"build", "--repo", p.repo, "--recipe", "sample-compiler", "--commit", "main", "-j", "2"});
  INFO(rebuilt.output);
  CHECK(rebuilt.exit_code == 0);
  CHECK(rebuilt.output.find(": ok in") != std::string::npos);

  auto policy = std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/frozen-test.policy";
  std::vector<std::string> eval = {"eval", "--repo", p.repo, "--build", "main", "--suite", "testdata", "--policy", policy,
                                   "-j", "2"};
  left = interrupt(p, eval, data + "/eval/");
  CHECK_MESSAGE(left.empty(), joined(left));
  // The row is not left `running`: any command that opens the database
  // records it interrupted once PostgreSQL has dropped the dead connection.
  std::string status;
  for (int i = 0; i < 100 && status.find("0 running, 1 interrupted") == std::string::npos; ++i) {
    if (i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    status = p.run({"db", "status"}).output;
  }
  CHECK_MESSAGE(status.find("evaluations: 0 done, 0 failed, 0 running, 1 interrupted") != std::string::npos, status);
  CHECK(Project::psql(p.dsn, "SELECT status FROM evaluations") == "interrupted");
  auto again = p.run(eval);
  INFO(again.output);
  CHECK(again.exit_code == 0);
  CHECK(again.output.find("matches or beats the default on") != std::string::npos);
  CHECK(Project::psql(p.dsn, "SELECT status FROM evaluations") == "done");
}

TEST_CASE("a sweep stopped by SIGINT mid-build puts its job back in the queue without counting the attempt") {
  Project p;
  p.make_small();
  auto left = interrupt(p, {"sweep", "--config", p.config}, (p.dir / "data" / "worktrees").string());
  CHECK_MESSAGE(left.empty(), joined(left));
  // Not left running until a later sweep finds its owner dead and takes it
  // back with the attempt counted: three stopped nights made the next claim
  // its last attempt, where a timeout is the check-in's result for good.
  CHECK(Project::psql(p.dsn, "SELECT count(*) FROM jobs WHERE state = 'running'") == "0");
  CHECK(Project::psql(p.dsn,
                      "SELECT string_agg(attempts || '|' || given_back, ',') FROM jobs WHERE kind = 'build' "
                      "AND given_back > 0") == "0|1");
  auto again = p.sweep(p.dsn);
  INFO(again.output);
  CHECK(again.exit_code == 0);
  CHECK(Project::psql(p.dsn, "SELECT count(*) FROM jobs WHERE state NOT IN ('done', 'skipped')") == "0");
}
