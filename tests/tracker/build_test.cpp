// Real builds of the sample compiler across a scripted eight-week history.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "builder/cache_prune.h"
#include "builder/generations.h"
#include "builder/recipe.h"
#include "common/file_lock.h"
#include "common/process.h"
#include "tests/support/temp_dir.h"
#include "tracker/checkin_build.h"
#include "tracker/sample_history.h"
#include "tracker/selection.h"
#include "tracker/worktree.h"

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

/// Makes a file immutable (as `chattr +i`) for its lifetime: not even root
/// can remove it, so a removal fails as on a read-only or broken disk.
/// `ok()`: false where that takes more than this process may (no
/// CAP_LINUX_IMMUTABLE, a filesystem without the flag).
class Immutable {
 public:
  explicit Immutable(const fs::path& file) : fd_(open(file.c_str(), O_RDONLY)), ok_(set(true)) {}
  bool ok() const { return ok_; }
  ~Immutable() {
    set(false);
    close(fd_);
  }

 private:
  bool set(bool on) {
    int flags = 0;
    if (fd_ < 0 || ioctl(fd_, FS_IOC_GETFLAGS, &flags) != 0) return false;
    flags = on ? (flags | FS_IMMUTABLE_FL) : (flags & ~FS_IMMUTABLE_FL);
    return ioctl(fd_, FS_IOC_SETFLAGS, &flags) == 0;
  }
  int fd_;
  bool ok_;
};

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The process has exited (a zombie nobody reaped counts as gone) within `limit`.
bool gone_within(pid_t pid, std::chrono::seconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  do {
    auto stat = read("/proc/" + std::to_string(pid) + "/stat");
    auto paren = stat.rfind(')');
    if (stat.empty() || (paren != std::string::npos && stat.substr(paren + 2, 1) == "Z")) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  } while (std::chrono::steady_clock::now() < deadline);
  return false;
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
    bool broken = commits[i].subject.find("Rename Pipeline.h") != std::string::npos;
    CHECK(builds[i].result.outcome == (broken ? builder::Outcome::BuildFailed : builder::Outcome::Ok));
  }
  const auto& broken = builds[3];
  CHECK(broken.result.message.find("PassPipeline.h") != std::string::npos);
  CHECK(broken.result.log_tail.find("error") != std::string::npos);
  CHECK(broken.result.artifacts.empty());
  // It failed from an empty build directory too before it was taken for the check-in's failure.
  CHECK(read(broken.result.log).find("building afresh") != std::string::npos);

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

  // A cached compiler damaged on disk (truncated) is not served: built again.
  auto size = fs::file_size(compiler);
  std::ofstream(compiler, std::ios::binary | std::ios::trunc) << "#!/bin/sh\n";
  auto rebuilt = build_checkin(repo, recipe, commits[2], options).take();
  CHECK_FALSE(rebuilt.result.from_cache);
  CHECK(rebuilt.result.outcome == builder::Outcome::Ok);
  CHECK(fs::file_size(rebuilt.result.artifacts.at("compiler")) == size);
  // And says so: a cache that changes under it is worth knowing about.
  CHECK(rebuilt.result.rebuilt_because ==
        "the cached build was damaged: artifact compiler's checksum no longer matches the build's");
  CHECK(build_checkin(repo, recipe, commits[2], options).take().result.rebuilt_because.empty());
  fs::remove(rebuilt.result.artifacts.at("compiler"));
  CHECK(build_checkin(repo, recipe, commits[2], options).take().result.rebuilt_because ==
        "the cached build was damaged: artifact compiler is missing");
}

TEST_CASE("a build that runs past the recipe's timeout is killed with its whole session, commands in groups of their own too") {
  testing::TempDir dir;
  auto repo = eight_weeks(dir);
  auto pid_file = dir / "background.pid", own_group = dir / "own-group.pid";
  // The second background process leaves the group, as ninja's commands do.
  auto text = "name = 'sleepy'\ntimeout = '2s'\n[build]\ncommand = '''sleep 30 & echo $! > " + pid_file.string() +
              "; perl -e 'setpgrp(0, 0); sleep 30' & echo $! > " + own_group.string() +
              "; sleep 30; echo never'''\n[artifacts]\ncompiler = 'bin/dwcc'\n";
  auto recipe = builder::parse_recipe(text, "sleepy.toml").take();
  auto commit = repo.commit("main").take();
  auto b = build_checkin(repo, recipe, commit, {dir / "data", 1, false}).take();
  CHECK(b.result.outcome == builder::Outcome::Timeout);
  CHECK(b.result.message.find("timed out") == 0);
  // The background sleep, in the build's process group, died with it.
  pid_t background = std::stoi(read(pid_file));
  REQUIRE(background > 0);
  CHECK(gone_within(background, std::chrono::seconds(5)));
  pid_t escaped = std::stoi(read(own_group));
  REQUIRE(escaped > 0);
  CHECK(gone_within(escaped, std::chrono::seconds(5)));
}

TEST_CASE("a build that timed out is not cached: the next run builds again") {
  testing::TempDir dir;
  auto repo = eight_weeks(dir);
  auto recipe =
      builder::parse_recipe(
          "name = 'slow'\ntimeout = '1s'\n[build]\ncommand = 'sleep 5'\n[artifacts]\ncompiler = 'bin/x'\n", "slow.toml")
          .take();
  auto commit = repo.commit("main").take();
  auto first = build_checkin(repo, recipe, commit, {dir / "data", 1, false}).take();
  CHECK(first.result.outcome == builder::Outcome::Timeout);
  CHECK(first.result.transient);
  CHECK(fs::exists(first.result.log));
  auto second = build_checkin(repo, recipe, commit, {dir / "data", 1, false}).take();
  CHECK_FALSE(second.result.from_cache);
  CHECK(second.result.outcome == builder::Outcome::Timeout);
  CHECK_FALSE(builder::read_cached(builder::cache_entry_dir(dir / "data", recipe, commit.sha)));
}

TEST_CASE("a build killed by a signal is not cached but a real failure is") {
  testing::TempDir dir;
  auto repo = eight_weeks(dir);
  auto commit = repo.commit("main").take();
  auto run = [&](const std::string& name, const std::string& command) {
    auto recipe = builder::parse_recipe("name = '" + name + "'\n[build]\ncommand = \"" + command +
                                            "\"\n[artifacts]\ncompiler = 'bin/x'\n",
                                        name + ".toml")
                      .take();
    auto first = build_checkin(repo, recipe, commit, {dir / "data", 1, false}).take();
    auto second = build_checkin(repo, recipe, commit, {dir / "data", 1, false}).take();
    INFO(name, ": ", first.result.message);
    CHECK(first.result.outcome == builder::Outcome::BuildFailed);
    CHECK(second.result.outcome == builder::Outcome::BuildFailed);
    return std::pair{first.result, second.result.from_cache};
  };
  // The shell itself killed (as the OOM killer would).
  auto [direct, direct_cached] = run("oom", "kill -KILL $$");
  CHECK(direct.transient);
  CHECK(direct.message.find("killed by signal 9") != std::string::npos);
  CHECK_FALSE(direct_cached);
  // A tool under the shell killed: the shell reports exit status 128+9.
  auto [nested, nested_cached] = run("nested", "sh -c 'kill -KILL $$'; exit $?");
  CHECK(nested.transient);
  CHECK(nested.message.find("exit status 137 (killed by a signal: not cached)") != std::string::npos);
  CHECK_FALSE(nested_cached);
  // A tool under the build tool killed, the build tool exiting 1 (as ninja
  // and make do): the shell under it says "Killed".
  auto [under, under_cached] = run("under-ninja", "sh -c 'sh -c \\\"kill -KILL \\\\$\\\\$\\\"; exit 1'; exit 1");
  CHECK(under.transient);
  CHECK(under.message.find("exit status 1 (the machine failed it: not cached): Killed") != std::string::npos);
  CHECK_FALSE(under_cached);
  // A command under ninja killed with no shell to say so (clang's driver
  // runs its compiler in-process): ninja prints the command and nothing else.
  auto ninja_file = dir / "killed.ninja";
  std::ofstream(ninja_file) << "rule k\n  command = kill -KILL $$$$\nbuild out: k\n";
  auto [silent, silent_cached] = run("killed-under-ninja", "ninja -f " + ninja_file.string());
  CHECK(silent.transient);
  CHECK(silent.unexplained);
  CHECK(silent.message.find("exit status 1 (commands under ninja failed without a word, as killed ones do: not "
                            "cached): FAILED: out") != std::string::npos);
  CHECK_FALSE(silent_cached);
  // A normal non-zero exit is the check-in's own failure: final.
  auto [real, real_cached] = run("broken", "echo 'error: no such file'; exit 1");
  CHECK_FALSE(real.transient);
  CHECK(real_cached);
  // The check-in's own tool crashing under the shell (128+SIGSEGV) recurs with it: final.
  auto [crash, crash_cached] = run("selftest-crash", "sh -c 'kill -SEGV $$'; exit $?");
  CHECK_FALSE(crash.transient);
  CHECK(crash.message.find("exit status 139: ") != std::string::npos);
  CHECK(crash_cached);
  // A tool the recipe runs is not installed on this machine: not the check-in's failure.
  auto [missing, missing_cached] = run("no-tool", "driftwatch-no-such-build-tool -j2");
  CHECK(missing.transient);
  CHECK(missing.message.find("exit status 127 (a command the recipe runs is not installed here: not cached)") !=
        std::string::npos);
  CHECK(missing.message.find("driftwatch-no-such-build-tool") != std::string::npos);
  CHECK_FALSE(missing_cached);
  // A script of the check-in that is gone from it is the check-in's failure: final.
  auto [gone, gone_cached] = run("gone-script", "./no-such-build.sh");
  CHECK_FALSE(gone.transient);
  CHECK(gone_cached);
}

TEST_CASE(
    "a build step its job called off is not cached, whatever it exits with (ninja under bash exits 2 on SIGTERM)") {
  testing::TempDir dir;
  auto repo = eight_weeks(dir);
  auto commit = repo.commit("main").take();
  // Catches SIGTERM and exits 2, as ninja does where /bin/sh is bash (which
  // runs a lone command in its own place): no signal says it was killed.
  auto recipe = builder::parse_recipe(
                    "name = 'stopped'\n[build]\ncommand = \"trap 'exit 2' TERM; sleep 30 & wait\"\n"
                    "[artifacts]\ncompiler = 'bin/x'\n",
                    "stopped.toml")
                    .take();
  std::atomic<bool> stop = false;
  common::StopScope scope(&stop);
  std::thread caller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    stop = true;
  });
  auto first = build_checkin(repo, recipe, commit, {dir / "data", 1, false}).take();
  caller.join();
  INFO(first.result.message);
  CHECK(first.result.transient);
  CHECK(first.result.message.find("(stopped: its job was called off; not cached)") != std::string::npos);
  // Not cached: the next build runs the step again (and is stopped again),
  // and, incremental now, does not wipe its build directory to try afresh.
  auto second = build_checkin(repo, recipe, commit, {dir / "data", 1, false}).take();
  CHECK_FALSE(second.result.from_cache);
  CHECK(second.result.transient);
  CHECK(read(second.result.log).find("building afresh") == std::string::npos);
}

TEST_CASE("a recipe whose configure flags changed configures again, and a flag dropped does not linger") {
  testing::TempDir dir;
  auto repo = eight_weeks(dir);
  auto commits = select_commits(repo, {}).take();
  CheckinBuildOptions options{dir / "data", 2, false};
  auto recipe = builder::load_recipe("sample-compiler").take();
  auto text = read(fs::path(DRIFTWATCH_SOURCE_DIR) / "samples/recipes/sample-compiler.toml");
  auto at = text.find("-DCMAKE_BUILD_TYPE=Release");
  REQUIRE(at != std::string::npos);
  auto changed =
      builder::parse_recipe(text.insert(at, "-DDRIFTWATCH_TEST_DEFINE=on "), "sample-compiler-changed.toml").take();
  REQUIRE(changed.name == recipe.name);  // same work tree: only the configuration differs
  auto cache = worktree_dir(options.data_dir, repo.location(), recipe.name) / "build/CMakeCache.txt";

  auto first = build_checkin(repo, recipe, commits[0], options).take();
  REQUIRE(first.result.outcome == builder::Outcome::Ok);
  CHECK(first.result.configured);
  auto second = build_checkin(repo, changed, commits[0], options).take();
  INFO(second.result.message);
  REQUIRE(second.result.outcome == builder::Outcome::Ok);
  CHECK_FALSE(second.result.from_cache);
  CHECK(second.result.configured);
  CHECK(read(cache).find("DRIFTWATCH_TEST_DEFINE") != std::string::npos);
  // Back to the shipped recipe on the next check-in: configured afresh, without the define.
  auto third = build_checkin(repo, recipe, commits[1], options).take();
  REQUIRE(third.result.outcome == builder::Outcome::Ok);
  CHECK(third.result.configured);
  CHECK(read(cache).find("DRIFTWATCH_TEST_DEFINE") == std::string::npos);
  // Unchanged recipe: configure is skipped again.
  auto fourth = build_checkin(repo, recipe, commits[2], options).take();
  CHECK_FALSE(fourth.result.configured);
}

TEST_CASE("a configure step that passes {jobs} on keeps its build directory at another -j") {
  testing::TempDir dir;
  auto repo = eight_weeks(dir);
  auto commits = select_commits(repo, {}).take();
  auto text = read(fs::path(DRIFTWATCH_SOURCE_DIR) / "samples/recipes/sample-compiler.toml");
  auto at = text.find("-DCMAKE_BUILD_TYPE=Release");
  REQUIRE(at != std::string::npos);
  // As LLVM's recipes pass -DLLVM_PARALLEL_LINK_JOBS={jobs}.
  auto recipe = builder::parse_recipe(text.insert(at, "-DDRIFTWATCH_TEST_JOBS={jobs} "), "jobs.toml").take();
  auto first = build_checkin(repo, recipe, commits[0], {dir / "data", 2, false}).take();
  REQUIRE(first.result.outcome == builder::Outcome::Ok);
  CHECK(first.result.configured);
  auto second = build_checkin(repo, recipe, commits[1], {dir / "data", 1, false}).take();
  INFO(second.result.message);
  REQUIRE(second.result.outcome == builder::Outcome::Ok);
  CHECK_FALSE(second.result.from_cache);
  CHECK_FALSE(second.result.configured);  // the same configuration: built on incrementally
}

TEST_CASE("cache prune removes the oldest builds beyond its limit, never one in use, and a pruned check-in builds again") {
  testing::TempDir dir;
  auto repo = eight_weeks(dir);
  auto commits = select_commits(repo, {}).take();
  auto recipe = builder::load_recipe("sample-compiler").take();
  CheckinBuildOptions options{dir / "data", 2, false};
  auto first = build_checkin(repo, recipe, commits[0], options).take();
  REQUIRE(first.result.outcome == builder::Outcome::Ok);
  auto second = build_checkin(repo, recipe, commits[1], options).take();
  REQUIRE(second.result.outcome == builder::Outcome::Ok);
  auto entries = builder::list_cache(options.data_dir);
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].bytes > 0);
  // Oldest first, even when both builds finished within one second.
  REQUIRE(entries[0].entry == builder::cache_entry_dir(options.data_dir, recipe, commits[0].sha));
  REQUIRE(entries[1].entry == builder::cache_entry_dir(options.data_dir, recipe, commits[1].sha));

  // Both over the limit, the newer one in use (a compiler being run): only the older goes.
  auto pinned = builder::pin_entry(entries[1].entry).take();
  builder::PruneLimits none_fit;
  none_fit.max_bytes = 1;
  auto dry = builder::prune_cache(options.data_dir, none_fit, true).take();
  // As the real run will: the entry in use is kept (helper 153).
  CHECK(dry.removed == 1);
  CHECK(dry.in_use == 1);
  // Named, for a person to read before the real run.
  REQUIRE(dry.removed_entries.size() == 1);
  CHECK(dry.removed_entries[0].entry == entries[0].entry);
  CHECK(builder::list_cache(options.data_dir).size() == 2);  // a dry run removes nothing
  auto out = builder::prune_cache(options.data_dir, none_fit, false).take();
  CHECK(out.removed == 1);
  CHECK(out.in_use == 1);
  CHECK(out.freed == entries[0].bytes);
  auto left = builder::list_cache(options.data_dir);
  REQUIRE(left.size() == 1);
  CHECK(left[0].entry == entries[1].entry);
  pinned.reset();

  auto again = build_checkin(repo, recipe, commits[0], options).take();
  CHECK(again.result.outcome == builder::Outcome::Ok);
  CHECK_FALSE(again.result.from_cache);
  CHECK(build_checkin(repo, recipe, commits[1], options).take().result.from_cache);

  // A removal that fails is said, with the file, and not counted as removed
  // nor as in use: `cache prune` would otherwise report it freed and exit 0.
  auto generation = builder::current_generation(entries[0].entry);
  REQUIRE(generation);
  {
    Immutable stuck(*generation / "result.json");
    if (!stuck.ok()) {
      testing::skip_test("cannot make a file immutable here (root on ext4, xfs or btrfs can)");
      return;
    }
    auto failed = builder::prune_cache(options.data_dir, none_fit, false).take();
    CHECK(failed.removed == 1);
    CHECK(failed.in_use == 0);
    CHECK(failed.kept == 1);
    REQUIRE(failed.failures.size() == 1);
    CHECK(failed.failures[0].find(generation->string()) != std::string::npos);
  }
  CHECK(builder::list_cache(options.data_dir).empty());
}

TEST_CASE("cache prune removes unfinished builds no build holds, and refuses a data directory without a cache") {
  testing::TempDir dir;
  builder::PruneLimits all_fit;
  all_fit.max_bytes = builder::kMaxSize;
  auto missing = builder::prune_cache(dir / "elsewhere", all_fit, false);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message.find((dir / "elsewhere" / "cache").string()) != std::string::npos);

  // What a build that timed out leaves: a generation no entry names.
  auto recipe_dir = dir / "data" / "cache" / "r-0123456789ab";
  auto unfinished = recipe_dir / "0123abcd.gen-x1";
  fs::create_directories(unfinished / "artifacts");
  std::ofstream(unfinished / "artifacts" / "half-a-compiler") << std::string(1000, 'x');
  auto two_days_ago = fs::file_time_type::clock::now() - std::chrono::hours(48);
  fs::last_write_time(unfinished, two_days_ago);
  // One of today, as another machine's build in progress on NFS looks, is left too.
  auto recent = recipe_dir / "89abcdef.gen-x2";
  fs::create_directories(recent);
  std::ofstream(recent / "build.log") << "[12/3000] Building CXX object";
  // One a build still holds is left alone.
  auto held = builder::new_generation(recipe_dir / "4567cdef").take();
  std::ofstream(held->dir() / "build.log") << std::string(500, 'y');

  auto dry = builder::prune_cache(dir / "data", all_fit, true).take();
  CHECK(dry.unfinished == 1);
  CHECK(dry.unfinished_bytes == 1000);
  CHECK(fs::exists(unfinished));
  auto out = builder::prune_cache(dir / "data", all_fit, false).take();
  CHECK(out.removed == 0);
  CHECK(out.unfinished == 1);
  CHECK(out.unfinished_bytes == 1000);
  CHECK_FALSE(fs::exists(unfinished));
  CHECK(fs::exists(held->dir() / "build.log"));
  CHECK(fs::exists(recent / "build.log"));
  CHECK(out.failures.empty());
}

TEST_CASE("a changed [compile] section is used for a cached build") {
  testing::TempDir dir;
  auto repo = eight_weeks(dir);
  auto commit = repo.commit("main").take();
  CheckinBuildOptions options{dir / "data", 2, false};
  auto recipe = builder::load_recipe("sample-compiler").take();
  auto text = read(fs::path(DRIFTWATCH_SOURCE_DIR) / "samples/recipes/sample-compiler.toml");
  auto at = text.find("{output} -Oz");
  REQUIRE(at != std::string::npos);
  text.replace(at, 12, "{output} -O2");
  // At -O2 the default's object may not be shared (LLVM's size cap): a recipe must not say it is.
  auto shared = text.find("share_agreeing_defaults = true");
  REQUIRE(shared != std::string::npos);
  text.replace(shared, 30, "share_agreeing_defaults = false");
  auto changed = builder::parse_recipe(text, "sample-compiler-O2.toml").take();
  REQUIRE(changed.build_hash == recipe.build_hash);  // [compile] is not part of the build
  REQUIRE(changed.content_hash != recipe.content_hash);  // but of what its evaluations measure

  auto built = build_checkin(repo, recipe, commit, options).take();
  REQUIRE(built.result.outcome == builder::Outcome::Ok);
  CHECK(built.result.compile.back() == "-Oz");
  auto cached = build_checkin(repo, changed, commit, options).take();
  CHECK(cached.result.from_cache);
  REQUIRE_FALSE(cached.result.compile.empty());
  CHECK(cached.result.compile.back() == "-O2");
  CHECK(cached.result.compile.front() == built.result.artifacts.at("compiler").string());
  // And back: the recipe in use decides, not the copy stored with the build.
  CHECK(build_checkin(repo, recipe, commit, options).take().result.compile.back() == "-Oz");
}

TEST_CASE("a recipe's [compile] timeout is kept with the cached build and served with it") {
  testing::TempDir dir;
  auto repo = eight_weeks(dir);
  auto commit = repo.commit("main").take();
  CheckinBuildOptions options{dir / "data", 1, false};
  auto recipe = builder::parse_recipe(
                    "name = 'quick'\n[build]\ncommand = 'mkdir -p {build}/bin && echo x > {build}/bin/x'\n"
                    "[artifacts]\ncompiler = 'bin/x'\n[compile]\n"
                    "command = '{compiler} {input} -o {output}'\ntimeout = '7m'\n",
                    "quick.toml")
                    .take();
  auto built = build_checkin(repo, recipe, commit, options).take();
  REQUIRE_MESSAGE(built.result.outcome == builder::Outcome::Ok, built.result.message);
  CHECK(built.result.compile_timeout.count() == 420);
  auto stored = builder::read_cached(builder::cache_entry_dir(dir / "data", recipe, commit.sha));
  REQUIRE(stored);
  CHECK(stored->compile_timeout.count() == 420);  // what a pinned artifact directory evaluates with
  auto served = build_checkin(repo, recipe, commit, options).take();
  CHECK(served.result.from_cache);
  CHECK(served.result.compile_timeout.count() == 420);
}

TEST_CASE("a step left running by a SIGKILLed driftwatch (ninja under the shell, its commands in groups of their own) is ended before the next build there") {
  testing::TempDir dir;
  auto repo = eight_weeks(dir);
  auto commit = repo.commit("main").take();
  // First run: starts grandchildren that would write `late` and `late2` 3 s
  // on, and waits; the second in a process group of its own, as ninja starts
  // every command. Any later run: fails at once (also from an empty build
  // directory: the mark is outside it).
  auto recipe = builder::parse_recipe(
                    "name = 'orphan'\n[build]\ncommand = \"\"\"if [ -e {data}/first ]; then exit 3; fi; "
                    "touch {data}/first; sh -c 'sleep 3; touch \\\"$1\\\"/late' sh {build} & "
                    "perl -e 'setpgrp(0, 0); open(my $g, \">\", \"$ARGV[0]/grouped\"); close($g); sleep 3; "
                    "open(my $f, \">\", \"$ARGV[0]/late2\")' {build}; wait\"\"\"\n"
                    "[artifacts]\ncompiler = 'bin/x'\n",
                    "orphan.toml")
                    .take();
  CheckinBuildOptions options{dir / "data", 1, false};
  pid_t killed = fork();
  REQUIRE(killed >= 0);
  if (killed == 0) {  // driftwatch, building, until the OOM killer takes it
    (void)build_checkin(repo, recipe, commit, options);
    _exit(0);
  }
  auto build_dir = worktree_dir(dir / "data", repo.location(), "orphan") / "build";
  // Killed once the step runs and driftwatch has recorded it (it does so
  // right after starting the shell, which under load may run first).
  auto recorded = build_dir.parent_path() / "step.pgid";
  // (and once the grandchild has left the step's group: else the test would pass with nothing to find).
  for (int i = 0; i < 200 && !(fs::exists(build_dir / "grouped") && fs::exists(recorded)); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(fs::exists(build_dir / "grouped"));
  REQUIRE(fs::exists(recorded));
  kill(killed, SIGKILL);
  waitpid(killed, nullptr, 0);
  // Its shell died with it; the `sh -c 'sleep 3; …'` under it did not.
  auto second = build_checkin(repo, recipe, commit, options).take();
  CHECK(second.result.outcome == builder::Outcome::BuildFailed);
  std::this_thread::sleep_for(std::chrono::seconds(4));
  CHECK_FALSE(fs::exists(build_dir / "late"));
  CHECK_FALSE(fs::exists(build_dir / "late2"));
  CHECK_FALSE(fs::exists(build_dir.parent_path() / "step.pgid"));
}

TEST_CASE("a recipe whose build command changed starts its build directory afresh, with or without a configure step") {
  // `make CFLAGS=…` alone, or ./configure once and then `make CXXFLAGS=…`:
  // the flags are the build command's either way.
  for (const char* configure : {"", "[configure]\ncommand = 'touch {build}/Makefile'\nskip_if_exists = 'Makefile'\n"}) {
    INFO("configure: " << configure);
    testing::TempDir dir;
    auto repo = eight_weeks(dir);
    auto commits = select_commits(repo, {}).take();
    REQUIRE(commits.size() >= 4);
    CheckinBuildOptions options{dir / "data", 1, false};
    auto with = [configure](const std::string& command) {
      return builder::parse_recipe("name = 'make-like'\n" + std::string(configure) + "[build]\ncommand = \"" + command +
                                       "\"\n[artifacts]\ncompiler = 'bin/x'\n",
                                   "make-like.toml")
          .take();
    };
    // Objects of the old flags must not be taken for up to date (as make would).
    auto old_flags = with("touch {build}/old-flags.o; mkdir -p {build}/bin; echo x > {build}/bin/x");
    auto new_flags = with("test ! -e {build}/old-flags.o && mkdir -p {build}/bin && echo x > {build}/bin/x");
    REQUIRE(build_checkin(repo, old_flags, commits[0], options).take().result.outcome == builder::Outcome::Ok);
    auto b = build_checkin(repo, new_flags, commits[1], options).take();
    INFO(b.result.message);
    CHECK(b.result.configured == (*configure != 0));
    CHECK(b.result.outcome == builder::Outcome::Ok);
    // The same command again keeps what it built: here, a file its first run leaves before failing.
    auto incremental = with("if [ ! -e {build}/made ]; then touch {build}/made; exit 1; fi; mkdir -p {build}/bin; "
                            "echo x > {build}/bin/x");
    CHECK(build_checkin(repo, incremental, commits[2], options).take().result.outcome == builder::Outcome::BuildFailed);
    CHECK(build_checkin(repo, incremental, commits[3], options).take().result.outcome == builder::Outcome::Ok);
  }
}

TEST_CASE(
    "a build that fails on what an earlier check-in's build left is built afresh, and only its own failure is cached") {
  testing::TempDir dir;
  auto repo = eight_weeks(dir);
  auto commits = select_commits(repo, {}).take();
  REQUIRE(commits.size() >= 3);
  CheckinBuildOptions options{dir / "data", 1, false};
  // Every build leaves an object the next one chokes on (a stale dependency
  // file after a header moved, say); an empty build directory builds.
  auto chokes = builder::parse_recipe(
                    "name = 'stale'\n[build]\ncommand = \"if [ -e {build}/stale.o ]; then echo 'error: stale.o is "
                    "not this tree' >&2; exit 1; fi; mkdir -p {build}/bin; echo x > {build}/bin/x; touch "
                    "{build}/stale.o\"\n[artifacts]\ncompiler = 'bin/x'\n",
                    "stale.toml")
                    .take();
  REQUIRE(build_checkin(repo, chokes, commits[0], options).take().result.outcome == builder::Outcome::Ok);
  auto b = build_checkin(repo, chokes, commits[1], options).take();
  INFO(b.result.message);
  CHECK(b.result.outcome == builder::Outcome::Ok);
  auto log = read(b.result.log);
  CHECK(log.find("stale.o is not this tree") != std::string::npos);  // the first try is kept in the log
  CHECK(log.find("building afresh") != std::string::npos);
}

TEST_CASE("the fresh build after a failed incremental one has the recipe's whole timeout of its own") {
  testing::TempDir dir;
  auto repo = eight_weeks(dir);
  auto commits = select_commits(repo, {}).take();
  REQUIRE(commits.size() >= 2);
  CheckinBuildOptions options{dir / "data", 1, false};
  // Each try takes 4 s of a 6 s timeout: the incremental one fails late on
  // the last build's object, the fresh one builds. Sharing one budget, the
  // fresh build was killed after 2 s and the check-in read as a timeout.
  auto slow = builder::parse_recipe(
                  "name = 'slow'\ntimeout = '6s'\n[build]\ncommand = \"sleep 4; if [ -e {build}/stale.o ]; then echo "
                  "'error: stale.o is not this tree' >&2; exit 1; fi; mkdir -p {build}/bin; echo x > {build}/bin/x; "
                  "touch {build}/stale.o\"\n[artifacts]\ncompiler = 'bin/x'\n",
                  "slow.toml")
                  .take();
  REQUIRE(build_checkin(repo, slow, commits[0], options).take().result.outcome == builder::Outcome::Ok);
  auto b = build_checkin(repo, slow, commits[1], options).take();
  INFO(b.result.message);
  CHECK(b.result.outcome == builder::Outcome::Ok);
  CHECK(read(b.result.log).find("building afresh") != std::string::npos);
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

TEST_CASE("an artifact an earlier check-in's build left, which this build no longer makes, is not this check-in's") {
  // The build makes the compiler once, then exits 0 without making it (a
  // target renamed by a later check-in, say). Without a configure step, and
  // with one that runs before every build (no skip_if_exists): its stamp is
  // then newer than the compiler the earlier build left.
  for (const char* configure : {"", "[configure]\ncommand = 'true'\n"}) {
    INFO("configure: " << configure);
    testing::TempDir dir;
    auto repo = eight_weeks(dir);
    auto commits = select_commits(repo, {}).take();
    REQUIRE(commits.size() >= 2);
    auto recipe = builder::parse_recipe(
                      "name = 'once'\n" + std::string(configure) +
                          "[build]\ncommand = \"[ -e {build}/done ] || { mkdir -p {build}/bin; "
                          "echo old > {build}/bin/x; touch {build}/done; }\"\n[artifacts]\ncompiler = 'bin/x'\n",
                      "once.toml")
                      .take();
    CheckinBuildOptions options{dir / "data", 1, false};
    REQUIRE(build_checkin(repo, recipe, commits[0], options).take().result.outcome == builder::Outcome::Ok);
    auto b = build_checkin(repo, recipe, commits[1], options).take();
    INFO(b.result.message);
    CHECK(b.result.configured == (*configure != 0));
    CHECK(b.result.outcome == builder::Outcome::MissingArtifact);
    CHECK(b.result.message.find("was not built") != std::string::npos);
  }
}

TEST_CASE("an artifact the configure step made (a wrapper) stays for the next check-in's build, which does not configure") {
  testing::TempDir dir;
  auto repo = eight_weeks(dir);
  auto commits = select_commits(repo, {}).take();
  REQUIRE(commits.size() >= 2);
  auto recipe = builder::parse_recipe(
                    "name = 'wrapped'\n[configure]\ncommand = 'mkdir -p {build}/bin && echo x > {build}/bin/x && "
                    "touch {build}/configured'\nskip_if_exists = 'configured'\n[build]\ncommand = 'true'\n"
                    "[artifacts]\ncompiler = 'bin/x'\n",
                    "w.toml")
                    .take();
  CheckinBuildOptions options{dir / "data", 1, false};
  REQUIRE(build_checkin(repo, recipe, commits[0], options).take().result.outcome == builder::Outcome::Ok);
  auto b = build_checkin(repo, recipe, commits[1], options).take();
  INFO(b.result.message);
  CHECK_FALSE(b.result.configured);
  CHECK(b.result.outcome == builder::Outcome::Ok);
}

TEST_CASE("a compiler linked against the work tree's own shared library is refused, not cached to load another check-in's") {
  testing::TempDir dir;
  auto repo = eight_weeks(dir);
  // A library and a program of the build tree, found through an absolute
  // rpath into the tree, or through $ORIGIN beside the program (which the
  // cache copies alone).
  int n = 0;
  for (const auto& [rpath, said] : std::vector<std::pair<std::string, std::string>>{
           {"{build}/lib", "loads libdwtree.so from the work tree ("},
           {"\\$ORIGIN/../lib", "needs libdwtree.so, which its cached copy cannot find"}}) {
    auto recipe = builder::parse_recipe(
                      "name = 'shared-" + std::to_string(++n) + "'\n[build]\ncommand = '''mkdir -p {build}/lib {build}/bin && "
                      "echo 'int f(void) { return 1; }' > {build}/f.c && echo 'int f(void); int main(void) { return f(); }' "
                      "> {build}/m.c && cc -shared -fPIC -o {build}/lib/libdwtree.so {build}/f.c && cc -o {build}/bin/x "
                      "{build}/m.c -L{build}/lib -ldwtree -Wl,-rpath," + rpath + "'''\n[artifacts]\ncompiler = 'bin/x'\n",
                      "s.toml")
                      .take();
    auto b = build_checkin(repo, recipe, repo.commit("main").take(), {dir / "data", 1, false}).take();
    INFO(b.result.message);
    CHECK(b.result.outcome == builder::Outcome::MissingArtifact);
    CHECK(b.result.message.find("artifact compiler " + said) == 0);
    CHECK(b.result.message.find("link the compiler statically") != std::string::npos);
  }
}

TEST_CASE("an empty artifact is recorded as missing-artifact, not cached as a compiler") {
  testing::TempDir dir;
  auto repo = eight_weeks(dir);
  auto recipe = builder::parse_recipe(
                    "name = 'empty'\n[build]\ncommand = 'mkdir -p {build}/bin && : > {build}/bin/x'\n"
                    "[artifacts]\ncompiler = 'bin/x'\n",
                    "e.toml")
                    .take();
  auto b = build_checkin(repo, recipe, repo.commit("main").take(), {dir / "data", 1, false}).take();
  CHECK(b.result.outcome == builder::Outcome::MissingArtifact);
  CHECK(b.result.message.find("is empty") != std::string::npos);
}

TEST_CASE("a rebuild that fails leaves the check-in's build that succeeded in the cache") {
  testing::TempDir dir;
  auto repo = eight_weeks(dir);
  // Fails once `broken` exists: a machine whose system compiler changed.
  auto broken = dir / "broken";
  auto recipe = builder::parse_recipe("name = 'flaky'\n[build]\ncommand = 'if test -e " + broken.string() +
                                          "; then echo \"x.c:1:1: error: unknown type\"; exit 1; fi; mkdir -p "
                                          "{build}/bin && echo compiler > {build}/bin/x'\n"
                                          "[artifacts]\ncompiler = 'bin/x'\n",
                                      "f.toml")
                    .take();
  auto commit = repo.commit("main").take();
  auto first = build_checkin(repo, recipe, commit, {dir / "data", 1, false}).take();
  REQUIRE(first.result.outcome == builder::Outcome::Ok);
  std::ofstream(broken) << "";
  auto rebuilt = build_checkin(repo, recipe, commit, {dir / "data", 1, true}).take();
  CHECK(rebuilt.result.outcome == builder::Outcome::BuildFailed);
  CHECK(rebuilt.result.message.find("the cache keeps this check-in's earlier build") != std::string::npos);
  auto cached = build_checkin(repo, recipe, commit, {dir / "data", 1, false}).take();
  CHECK(cached.result.from_cache);
  CHECK(cached.result.outcome == builder::Outcome::Ok);
  CHECK(read(cached.result.artifacts.at("compiler")) == "compiler\n");
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

TEST_CASE("a build failing in words that are not UTF-8 is cached as the check-in's failure, the bytes replaced") {
  testing::TempDir dir;
  auto repo = eight_weeks(dir);
  // GCC quoting a Latin-1 source line: the log's bytes once made writing the
  // cache entry throw, so the failure was never recorded and built again.
  auto recipe = builder::parse_recipe("name = 'latin1'\n[build]\ncommand = 'printf \"error: caf\\\\351\\\\n\"; exit 2'\n"
                                      "[artifacts]\ncompiler = 'bin/x'\n",
                                      "b.toml")
                    .take();
  auto first = build_checkin(repo, recipe, repo.commit("main").take(), {dir / "data", 1, false});
  REQUIRE(first);
  CHECK(first->result.outcome == builder::Outcome::BuildFailed);
  auto again = build_checkin(repo, recipe, repo.commit("main").take(), {dir / "data", 1, false}).take();
  CHECK(again.result.from_cache);
  CHECK(again.result.outcome == builder::Outcome::BuildFailed);
  CHECK(again.result.message == "build exit status 2: error: caf\xef\xbf\xbd");
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

TEST_CASE("a build that waits for another in the same work tree says so, then builds") {
  testing::TempDir dir;
  auto repo = eight_weeks(dir);
  auto recipe = builder::parse_recipe("name = 'quick'\n[build]\ncommand = 'mkdir -p {build}/bin && echo x > {build}/bin/dwcc'\n"
                                      "[artifacts]\ncompiler = 'bin/dwcc'\n",
                                      "quick.toml")
                    .take();
  auto commit = repo.commit("main").take();
  auto tree = worktree_dir(dir / "data", repo.location(), recipe.name);
  fs::create_directories(tree);
  // Another process's build holds the work tree.
  auto held = std::make_optional(common::FileLock::acquire(tree / "build.lock").take());
  std::vector<std::string> told;
  std::mutex told_mutex;
  std::thread release([&] {
    for (int i = 0; i < 200; ++i) {
      {
        std::lock_guard<std::mutex> lock(told_mutex);
        if (!told.empty()) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    held.reset();
  });
  CheckinBuildOptions options{dir / "data", 1, false, [&](const std::string& why) {
                                std::lock_guard<std::mutex> lock(told_mutex);
                                told.push_back(why);
                              }};
  auto b = build_checkin(repo, recipe, commit, options).take();
  release.join();
  CHECK_MESSAGE(b.result.outcome == builder::Outcome::Ok, b.result.message);
  REQUIRE(told.size() == 1);
  CHECK(told[0] == "waiting for another build in " + tree.string() +
                       " (a driftwatch build or worker of this data directory) to finish");
}

TEST_CASE("a cache entry whose result.json is unreadable or of the wrong shape is rejected, saying so") {
  testing::TempDir dir;
  auto reason_for = [&](const std::string& json) {
    std::ofstream(dir / "result.json", std::ios::trunc) << json;
    std::string damaged = "left over";
    CHECK_FALSE(builder::read_cached(dir.path(), &damaged));
    return damaged;
  };
  CHECK(reason_for("{not json") == "its result.json is unreadable");
  CHECK(reason_for("[1, 2]") == "its result.json is unreadable");
  CHECK(reason_for(R"({"outcome": 5})") == "its result.json is unreadable");
  CHECK(reason_for(R"({"outcome": "ok", "artifacts": {"compiler": 7}})") == "its result.json is unreadable");
  CHECK(reason_for(R"({"outcome": "exploded"})") == "its result.json names an unknown outcome");
  CHECK(reason_for(R"({"outcome": "ok", "artifacts": {"compiler": "dwcc"}})") == "artifact compiler is missing");
  // A good entry leaves no reason behind.
  std::string damaged = "left over";
  std::ofstream(dir / "result.json", std::ios::trunc) << R"({"outcome": "build-failed", "message": "no"})";
  auto failed = builder::read_cached(dir.path(), &damaged);
  REQUIRE(failed);
  CHECK(failed->outcome == builder::Outcome::BuildFailed);
  CHECK(damaged.empty());
}

TEST_CASE("a compile under ccache in another work tree of the same check-in is a cache hit") {
  testing::TempDir dir;
  auto repo = eight_weeks(dir);
  // The source sits at an absolute path inside the work tree: without
  // CCACHE_BASEDIR the second work tree's path misses the cache.
  auto recipe = builder::parse_recipe(
                    "name = 'cached'\nlauncher = 'ccache'\n[build]\ncommand = \"mkdir -p {build}/bin && echo 'int "
                    "f(void) { return 1; }' > {build}/p.c && cd {build} && {launcher} cc -c {build}/p.c -o "
                    "{build}/bin/p.o\"\n[artifacts]\nobject = 'bin/p.o'\n",
                    "cached.toml")
                    .take();
  setenv("CCACHE_DIR", (dir / "ccache").c_str(), 1);
  std::optional<std::string> basedir;
  if (const char* b = std::getenv("CCACHE_BASEDIR")) basedir = b;
  unsetenv("CCACHE_BASEDIR");
  auto commit = repo.commit("main").take();
  for (const char* data : {"data-one", "data-two"}) {
    auto b = build_checkin(repo, recipe, commit, {dir / data, 1, false}).take();
    INFO(b.result.log_tail);
    REQUIRE(b.result.outcome == builder::Outcome::Ok);
  }
  common::ProcessSpec stats;
  stats.argv = {"ccache", "--print-stats"};
  auto printed = common::run_process(stats).take().output;
  unsetenv("CCACHE_DIR");
  if (basedir) setenv("CCACHE_BASEDIR", basedir->c_str(), 1);
  INFO(printed);
  CHECK(printed.find("\ndirect_cache_hit\t1\n") != std::string::npos);
  CHECK(printed.find("\ncache_miss\t1\n") != std::string::npos);
}
