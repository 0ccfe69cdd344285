// sample-history, commits and build from the command line: output, records, bad input.
#include <doctest/doctest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "common/text.h"
#include "tests/support/history_file.h"
#include "tests/support/policy_file.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_db.h"

using testing::run_driftwatch;
using testing::TempDir;

namespace {

void check_one_line_error(const common::ProcessResult& r, const std::string& needle) {
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(common::trim(r.output).find('\n') == std::string::npos);
  CHECK(r.output.find(needle) != std::string::npos);
}

std::string history_8w() { return std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/history-8w.toml"; }

std::string test_dsn() {
  std::string name;
  testing::fresh_database(true, &name);
  return "host=" + testing::test_cluster_dir() + "/postgres user=postgres dbname=" + name;
}

}  // namespace

TEST_CASE("sample-history writes the shipped year and commits samples it") {
  TempDir dir;
  auto repo = (dir / "year").string();
  auto r = run_driftwatch({"sample-history", repo});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("55 check-ins (52 on the main branch)") != std::string::npos);

  auto monthly = run_driftwatch({"commits", "--repo", repo, "--every", "1m"});
  CHECK(monthly.exit_code == 0);
  CHECK(common::split(common::trim(monthly.output), '\n').size() == 12);
  auto tags = run_driftwatch({"commits", "--repo", repo, "--tags", "--json"});
  CHECK(tags.exit_code == 0);
  CHECK(tags.output.find("\"v1.0\"") != std::string::npos);
  CHECK(tags.output.find("\"v1.1\"") != std::string::npos);
  auto merge = run_driftwatch({"commits", "--repo", repo, "--since", "2026-07-21", "--until", "2026-07-21"});
  CHECK(merge.output.find("[merge] Merge branch 'side/cost-model'") != std::string::npos);

  auto again = run_driftwatch({"sample-history", repo});
  check_one_line_error(again, "already exists and is not empty");
}

TEST_CASE("commits and build refuse bad repositories, revisions, ranges and recipes in one line") {
  TempDir dir;
  auto repo = (dir / "repo").string();
  REQUIRE(run_driftwatch({"sample-history", repo, "--history", history_8w()}).exit_code == 0);
  check_one_line_error(run_driftwatch({"commits", "--repo", dir.path().string()}), "is not a git repository");
  check_one_line_error(run_driftwatch({"commits", "--repo", repo, "--branch", "nope"}), "unknown branch 'nope'");
  check_one_line_error(run_driftwatch({"commits", "--repo", repo, "--from", "deadbeef"}), "unknown revision 'deadbeef'");
  check_one_line_error(run_driftwatch({"commits", "--repo", repo, "--since", "2031-01-01"}), "no check-ins to take");
  check_one_line_error(run_driftwatch({"commits", "--repo", repo, "--since", "last tuesday"}), "invalid date");
  check_one_line_error(run_driftwatch({"commits", "--repo", repo, "--every", "fortnightly"}), "--every takes");

  auto data = "--data-dir=" + (dir / "data").string();
  check_one_line_error(run_driftwatch({data, "build", "--repo", repo, "--recipe", "sample-compiler", "--commit", "v9"}),
                       "unknown revision 'v9'");
  std::ofstream(dir / "bad.toml") << "name = 'x'\n[build]\ncommand = 'make'\ntarget = 'all'\n[artifacts]\ncc = 'cc'\n";
  check_one_line_error(
      run_driftwatch({data, "build", "--repo", repo, "--recipe", (dir / "bad.toml").string(), "--commit", "main"}),
      "bad.toml: unknown key 'build.target'");
  std::ofstream(dir / "nobuild.toml") << "name = 'x'\n[artifacts]\ncc = 'cc'\n";
  check_one_line_error(
      run_driftwatch({data, "build", "--repo", repo, "--recipe", (dir / "nobuild.toml").string(), "--commit", "main"}),
      "nobuild.toml: missing table [build]");
  check_one_line_error(run_driftwatch({data, "build", "--repo", repo, "--recipe", "no-such-recipe", "--commit", "main"}),
                       "cannot read recipe no-such-recipe");
}

TEST_CASE("an unwritable data directory for work trees and the cache is refused in one line") {
  TempDir dir;
  auto repo = (dir / "repo").string();
  REQUIRE(run_driftwatch({"sample-history", repo, "--history", history_8w()}).exit_code == 0);
  std::filesystem::create_directories(dir / "ro");
  chmod((dir / "ro").c_str(), 0555);
  if (geteuid() == 0) {  // as root every directory is writable: run as nobody, who may read the repository
    const passwd* nobody = getpwnam("nobody");
    REQUIRE(nobody != nullptr);
    for (const auto& e : std::filesystem::recursive_directory_iterator(repo))
      REQUIRE(lchown(e.path().c_str(), nobody->pw_uid, nobody->pw_gid) == 0);
    REQUIRE(chown(repo.c_str(), nobody->pw_uid, nobody->pw_gid) == 0);
  }
  check_one_line_error(
      testing::run_driftwatch_unprivileged({"--data-dir=" + (dir / "ro/data").string(), "build", "--repo", repo,
                                            "--recipe", "sample-compiler", "--commit", "main"}),
      "ro/data");
  CHECK_FALSE(std::filesystem::exists(dir / "ro/data"));
}

TEST_CASE("a data directory blocked by a file is refused for builds in one line") {
  TempDir dir;
  auto repo = (dir / "repo").string();
  REQUIRE(run_driftwatch({"sample-history", repo, "--history", history_8w()}).exit_code == 0);
  std::ofstream(dir / "blocked") << "x";
  check_one_line_error(run_driftwatch({"--data-dir=" + (dir / "blocked").string(), "build", "--repo", repo, "--recipe",
                                       "sample-compiler", "--commit", "main"}),
                       "blocked");
}

TEST_CASE("build --dry-run shows the exact commands of the llvm-project recipe") {
  TempDir dir;
  auto repo = (dir / "repo").string();
  REQUIRE(run_driftwatch({"sample-history", repo, "--history", history_8w()}).exit_code == 0);
  auto r = run_driftwatch({"--data-dir=" + (dir / "data").string(), "build", "--repo", repo, "--recipe",
                           "llvm-project", "--commit", "main", "--dry-run", "-j", "2"});
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("-DLLVM_TARGETS_TO_BUILD=host") != std::string::npos);
  CHECK(r.output.find("build: ninja -C ") != std::string::npos);
  CHECK(r.output.find(" -j 2 opt llc clang") != std::string::npos);
  // Where it would be cached: under the build's hash, which the recipe line names beside the recipe's own.
  auto hashes = r.output.substr(r.output.find("recipe llvm-project ("));
  auto build_hash = hashes.substr(hashes.find("its build's hash ") + 17, 12);
  CHECK(r.output.find("cached in: " + (dir / "data" / "cache").string() + "/llvm-project-" + build_hash + "/") !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "data/cache"));  // nothing built
}

TEST_CASE("integer options are read as decimal: 010 is ten, 0x10 and a negative seed are refused") {
  TempDir dir;
  auto repo = (dir / "repo").string();
  REQUIRE(run_driftwatch({"sample-history", repo, "--history", history_8w()}).exit_code == 0);
  auto data = "--data-dir=" + (dir / "data").string();
  // CLI11 reads integers in base 0: this was "-j 8".
  auto r = run_driftwatch(
      {data, "build", "--repo", repo, "--recipe", "sample-compiler", "--commit", "main", "--dry-run", "-j", "010"});
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find(" -j 10") != std::string::npos);
  r = run_driftwatch(
      {data, "build", "--repo", repo, "--recipe", "sample-compiler", "--commit", "main", "--dry-run", "-j", "0x10"});
  check_one_line_error(r, "--jobs: 0x10 is not a whole decimal number");
  // An unsigned seed wrapped to 18446744073709551615.
  r = run_driftwatch({data, "train", "--out", (dir / "p.policy").string(), "--seed", "-1"});
  check_one_line_error(r, "--seed: -1 is negative");
  r = run_driftwatch({data, "train", "--out", (dir / "p.policy").string(), "--seed", "1e3"});
  check_one_line_error(r, "--seed: 1e3 is not a whole decimal number");
  // A mistyped SOURCE_DATE_EPOCH stamped the policy 1970-01-01.
  r = run_driftwatch({data, "train", "--repo", repo, "--recipe", "sample-compiler", "--build", "main", "--suite",
                      "no-such-suite", "--out", (dir / "p.policy").string()},
                     {{"SOURCE_DATE_EPOCH", "2026-12-05"}});
  check_one_line_error(r, "SOURCE_DATE_EPOCH=2026-12-05 is not a number of seconds");
}

TEST_CASE("build records the outcome in the database and a rebuild is served from the cache") {
  TempDir dir;
  auto repo = (dir / "repo").string();
  REQUIRE(run_driftwatch({"sample-history", repo, "--history", history_8w()}).exit_code == 0);
  auto dsn = test_dsn();
  auto data = "--data-dir=" + (dir / "data").string();
  auto first = run_driftwatch({data, "--db", dsn, "build", "--repo", repo, "--recipe", "sample-compiler", "--commit", "v1.0"});
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  CHECK(first.output.find(": ok in") != std::string::npos);
  CHECK(first.output.find("compiler " + (dir / "data/cache").string()) != std::string::npos);
  auto second = run_driftwatch({data, "--db", dsn, "build", "--repo", repo, "--recipe", "sample-compiler", "--commit", "v1.0"});
  CHECK(second.output.find("(cached)") != std::string::npos);
  // A cached compiler changed on disk is built again, and the output says why.
  auto at = second.output.find("\ncompiler ");
  REQUIRE(at != std::string::npos);
  auto compiler = second.output.substr(at + 10, second.output.find('\n', at + 1) - at - 10);
  std::ofstream(compiler, std::ios::trunc) << "#!/bin/sh\n";
  auto third = run_driftwatch({data, "--db", dsn, "build", "--repo", repo, "--recipe", "sample-compiler", "--commit", "v1.0"});
  INFO(third.output);
  CHECK(third.output.find("(cached)") == std::string::npos);
  CHECK(third.output.find("built again: the cached build was damaged: artifact compiler's checksum no longer matches") !=
        std::string::npos);

  // The broken rename: exit 1 (a negative result, not bad input), recorded as build-failed.
  auto broken = run_driftwatch(
      {data, "--db", dsn, "build", "--repo", repo, "--recipe", "sample-compiler", "--commit", "main~4"});
  INFO(broken.output);
  CHECK(broken.exit_code == 1);
  CHECK(broken.output.find("build-failed") != std::string::npos);

  common::ProcessSpec psql;
  psql.argv = {"psql", "-X", "-At", dsn, "-c", "SELECT outcome, count(*) FROM builds GROUP BY outcome ORDER BY outcome"};
  auto rows = common::run_process(psql).take();
  CHECK(common::trim(rows.output) == "build-failed|1\nok|1");

  // Killed as the OOM killer would: the machine's failure, exit 1, and no
  // outcome recorded that a sweep's drift would take for a broken check-in.
  auto recipe = dir / "oom.toml";
  std::ofstream(recipe) << "name = 'oom'\n[build]\ncommand = 'kill -KILL $$'\n[artifacts]\ncompiler = 'bin/x'\n";
  auto killed = run_driftwatch({data, "--db", dsn, "build", "--repo", repo, "--recipe", recipe.string(), "--commit", "v1.0"});
  INFO(killed.output);
  CHECK(killed.exit_code == 1);
  CHECK(killed.output.find("killed by signal 9") != std::string::npos);
  rows = common::run_process(psql).take();
  CHECK(common::trim(rows.output) == "build-failed|1\nok|1");
}

TEST_CASE("init writes the repository and policy it was given as absolute paths, quoted for TOML whatever they hold") {
  TempDir dir;
  auto repo = dir / "my \"repo\"";
  REQUIRE(run_driftwatch({"sample-history", repo.string(), "--history", history_8w()}).exit_code == 0);
  common::ProcessSpec init;
  init.argv = {DRIFTWATCH_BIN, "init", "proj", "--repo", "my \"repo\""};
  init.cwd = dir.path();
  auto r = common::run_process(init).take();
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  // init parses what it writes before writing it: the file is valid TOML.
  std::ifstream in(dir / "proj" / "driftwatch.toml");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  CHECK(text.find("repo = \"" + dir.path().string() + "/my \\\"repo\\\"\"") != std::string::npos);
  CHECK(text.find("recipe = \"sample-compiler\"") != std::string::npos);  // not an llvm-project checkout
  CHECK(text.find("since = \"\"") != std::string::npos);

  init.argv = {DRIFTWATCH_BIN, "init", "other", "--repo", "no-such-checkout"};
  auto missing = common::run_process(init).take();
  check_one_line_error(missing, "repository " + (dir / "no-such-checkout").string() + " does not exist");
  CHECK_FALSE(std::filesystem::exists(dir / "other"));  // nothing half-made

  // "proj2/", as tab completion writes it: named proj2, not "" (nor a name every such project shares).
  init.argv = {DRIFTWATCH_BIN, "init", "proj2/", "--repo", "my \"repo\""};
  auto slashed = common::run_process(init).take();
  INFO(slashed.output);
  REQUIRE(slashed.exit_code == 0);
  std::ifstream in2(dir / "proj2" / "driftwatch.toml");
  std::string text2((std::istreambuf_iterator<char>(in2)), {});
  CHECK(text2.find("name = \"proj2\"") != std::string::npos);
}

TEST_CASE("init on an llvm-project checkout writes its recipe and samples the last year, not all of LLVM") {
  TempDir dir;
  // The 8-week history, then a check-in that makes it look like llvm-project.
  testing::history_8w_with(dir / "history.toml", R"(
[[checkin]]
week = 9
author = "Jon Meyer <jon.meyer@example.org>"
message = "[CMake] Move the compiler under llvm/"

[[checkin.edit]]
file = "llvm/CMakeLists.txt"
write = "project(LLVM)\n"

[[checkin]]
week = 10
author = "Jon Meyer <jon.meyer@example.org>"
message = "[Docs] Say where the compiler lives now"

[[checkin.edit]]
file = "docs/Layout.md"
write = "The compiler is under llvm/.\n"
)");
  auto repo = dir / "llvm-project";
  REQUIRE(run_driftwatch({"sample-history", repo.string(), "--history", (dir / "history.toml").string()}).exit_code ==
          0);
  // What libgit2 reads is the commit's tree: a work tree with nothing checked out answers too.
  std::filesystem::remove_all(repo / "llvm");
  // A clone's origin/main is what the nightly `git fetch` moves.
  common::ProcessSpec ref;
  ref.argv = {"git", "-C", repo.string(), "update-ref", "refs/remotes/origin/main", "HEAD"};
  REQUIRE(common::run_process(ref).take().exit_code == 0);
  auto r = run_driftwatch({"init", (dir / "proj").string(), "--repo", repo.string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("is an llvm-project checkout") != std::string::npos);
  std::ifstream file(dir / "proj" / "driftwatch.toml");
  std::string written((std::istreambuf_iterator<char>(file)), {});
  CHECK(written.find("recipe = \"llvm-project\"") != std::string::npos);
  // A year before its newest check-in (week 10 of a history that starts on 2025-12-01: 2026-02-09).
  CHECK(written.find("since = \"2025-02-09\"") != std::string::npos);
  CHECK(written.find("branch = \"origin/main\"") != std::string::npos);
  CHECK(r.output.find("tracking origin/main") != std::string::npos);

  // Checked out at an older check-in (a release tag, say), the range is
  // still dated from the tracked branch's tip, not from HEAD's (week 9's). A
  // clone whose default branch is master (origin/HEAD names it) tracks that.
  auto git = [&](std::vector<std::string> args) {
    common::ProcessSpec spec;
    spec.argv = {"git", "-C", repo.string()};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    REQUIRE(common::run_process(spec).take().exit_code == 0);
  };
  git({"checkout", "-q", "--detach", "HEAD~1"});
  auto tagged = run_driftwatch({"init", (dir / "proj-tag").string(), "--repo", repo.string()});
  INFO(tagged.output);
  REQUIRE(tagged.exit_code == 0);
  std::ifstream tag_file(dir / "proj-tag" / "driftwatch.toml");
  std::string tag_written((std::istreambuf_iterator<char>(tag_file)), {});
  CHECK(tag_written.find("since = \"2025-02-09\"") != std::string::npos);
  CHECK(tag_written.find("branch = \"origin/main\"") != std::string::npos);
  CHECK(tagged.output.find("a year before the tip of origin/main") != std::string::npos);
  git({"update-ref", "refs/remotes/origin/master", "refs/remotes/origin/main"});
  git({"update-ref", "-d", "refs/remotes/origin/main"});
  git({"symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/master"});
  auto master = run_driftwatch({"init", (dir / "proj-master").string(), "--repo", repo.string()});
  INFO(master.output);
  REQUIRE(master.exit_code == 0);
  CHECK(master.output.find("tracking origin/master") != std::string::npos);

  // A year later, a policy trained at the first check-in: the range reaches
  // back to it, or its baseline would never be measured.
  std::ofstream(dir / "history.toml", std::ios::app) << R"(
[[checkin]]
week = 70
author = "Jon Meyer <jon.meyer@example.org>"
message = "[Docs] A year on"

[[checkin.edit]]
file = "docs/ReleaseNotes.md"
write = "# dwcc release notes\n"
)";
  auto later = dir / "llvm-later";
  REQUIRE(
      run_driftwatch({"sample-history", later.string(), "--history", (dir / "history.toml").string(), "--weeks", "80"})
          .exit_code == 0);
  common::ProcessSpec first_commit;
  first_commit.argv = {DRIFTWATCH_BIN, "commits", "--repo", later.string(), "--every", "1000", "--json"};
  auto listed = common::run_process(first_commit).take();
  REQUIRE(listed.exit_code == 0);
  auto at = listed.output.find("\"sha\": \"");
  REQUIRE(at != std::string::npos);
  auto root = listed.output.substr(at + 8, 40);
  std::ifstream shipped(std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/frozen-test.policy", std::ios::binary);
  std::string policy_text((std::istreambuf_iterator<char>(shipped)), {});
  std::ofstream(dir / "early.policy", std::ios::binary)
      << testing::edited_policy(policy_text, "0613a3f6180afd22cd4ad03b2fdb87e4a89e6f6d", root);
  auto r2 = run_driftwatch(
      {"init", (dir / "proj2").string(), "--repo", later.string(), "--policy", (dir / "early.policy").string()});
  INFO(r2.output);
  REQUIRE(r2.exit_code == 0);
  CHECK(r2.output.find("(the policy's training check-in " + root.substr(0, 12) + ")") != std::string::npos);
  std::ifstream file2(dir / "proj2" / "driftwatch.toml");
  std::string written2((std::istreambuf_iterator<char>(file2)), {});
  CHECK(written2.find("branch = \"\"") != std::string::npos);  // no origin/main there: HEAD
  CHECK(written2.find("since = \"2025-12-01\"") != std::string::npos);

  // A policy trained within the year: from its training check-in, not the
  // months before it, which drift analysis leaves out (LLVM builds for nothing).
  common::ProcessSpec newest;
  newest.argv = {"git", "-C", later.string(), "rev-parse", "HEAD"};
  auto head = common::trim(common::run_process(newest).take().output);
  REQUIRE(head.size() == 40);
  std::ofstream(dir / "recent.policy", std::ios::binary)
      << testing::edited_policy(policy_text, "0613a3f6180afd22cd4ad03b2fdb87e4a89e6f6d", head);
  auto r3 = run_driftwatch(
      {"init", (dir / "proj3").string(), "--repo", later.string(), "--policy", (dir / "recent.policy").string()});
  INFO(r3.output);
  REQUIRE(r3.exit_code == 0);
  CHECK(r3.output.find("(the policy's training check-in " + head.substr(0, 12) + ")") != std::string::npos);
  std::ifstream file3(dir / "proj3" / "driftwatch.toml");
  std::string written3((std::istreambuf_iterator<char>(file3)), {});
  CHECK(written3.find("since = \"2027-04-05\"") != std::string::npos);  // week 70
}

TEST_CASE("output that cannot be written (a full disk) fails the command, not only the bytes") {
  TempDir dir;
  auto repo = dir / "repo";
  REQUIRE(run_driftwatch({"sample-history", repo.string(), "--history", history_8w()}).exit_code == 0);
  common::ProcessSpec full;
  // A short listing, held in stdio's buffer until exit: the write fails there.
  full.argv = {"/bin/sh", "-c", "exec \"$0\" commits --repo \"$1\" --every 1000 > /dev/full", DRIFTWATCH_BIN,
               repo.string()};
  auto r = common::run_process(full).take();
  check_one_line_error(r, "cannot write the output: No space left on device");
}

TEST_CASE("cache prune refuses a bare number, which would read as seconds or bytes and remove nearly everything") {
  TempDir dir;
  auto data = (dir / "data").string();
  check_one_line_error(run_driftwatch({"--data-dir", data, "cache", "prune", "--older-than", "30"}),
                       "--older-than 30 has no unit: write 30d, say (d, h, m or s); nothing was removed");
  check_one_line_error(run_driftwatch({"--data-dir", data, "cache", "prune", "--max-size", "50"}),
                       "--max-size 50 has no unit: write 50G, say (K, M, G or T); nothing was removed");
}
