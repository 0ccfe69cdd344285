// train, eval, policy info and policy serve end to end: the real binary, a
// real suite (samples/testdata through clang-19), real compiles, PostgreSQL.
#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <optional>
#include <thread>

#include "common/process.h"
#include "common/text.h"
#include "tests/support/sweep_project.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_db.h"

using testing::run_driftwatch;
using testing::TempDir;
namespace fs = std::filesystem;

namespace {

/// The 8-week history, the testdata suite and a database of their own.
using Fixture = testing::Project;

}  // namespace

TEST_CASE("train writes a policy with complete metadata and eval stores results idempotently") {
  Fixture f;
  auto policy = (f.dir / "p.policy").string();
  auto t = f.run({"train", "--repo", f.repo, "--build", "v1.0", "--suite", "testdata", "--out", policy, "--iterations",
                  "2", "--clone-epochs", "50", "--search-trials", "2", "-j", "2"});
  INFO(t.output);
  REQUIRE(t.exit_code == 0);
  CHECK(t.output.find("[reinforce  2/2]") != std::string::npos);
  CHECK(t.output.find("uplift on the training suite") != std::string::npos);  // no validation suite given

  auto info = f.run({"policy", "info", policy, "--json"});
  REQUIRE(info.exit_code == 0);
  for (const char* key : {"\"content_hash\"", "\"compiler_commit\"", "\"corpus\": \"testdata@", "\"seed\": 1",
                          "\"created\"", "\"sroa_savings\"", "\"method\"", "\"train_uplift_geomean\""})
    CHECK_MESSAGE(info.output.find(key) != std::string::npos, key);

  // Scratch left by a killed evaluation on this host is removed by the
  // next; another host's or container's (another PID namespace), or a live
  // process's, is theirs.
  // Above the kernel's pid_max: no process has it, now or later.
  long gone = 0;
  std::ifstream("/proc/sys/kernel/pid_max") >> gone;
  REQUIRE(gone > 0);
  ++gone;
  auto scratch = [&](const std::string& host, long pid, const std::string& ns = common::pid_namespace()) {
    auto d = f.dir / "data" / "eval" / ("7-" + host + "-" + ns + "-" + std::to_string(pid) + "-0");
    std::filesystem::create_directories(d);
    std::ofstream(d / "m.o") << "object";
    return d;
  };
  auto orphan = scratch(common::host_name(), gone), elsewhere = scratch("other-host", gone),
       live = scratch(common::host_name(), getpid()),
       container = scratch(common::host_name(), gone, common::pid_namespace() + "1");
  // A compile the killed evaluation left behind a wrapper that did not exec
  // (blocked on its dead ML channel, it would wait for ever) dies with its
  // scratch; one of a live evaluation's scratch is left alone.
  auto naming = [](const std::filesystem::path& dir) {
    common::ProcessSpec spec;
    // One process (perl-base is essential in Debian): a shell would leave its sleep behind when killed.
    spec.argv = {"perl", "-e", "sleep 300", (dir / "channel.in").string()};
    return common::Child::start(spec).take();
  };
  auto stuck = naming(orphan), working = naming(live);
  // One started by a worker that reached the data directory through a symlink.
  auto link = f.dir / "data-by-link";
  std::filesystem::create_directory_symlink(f.dir / "data", link);
  auto stuck_by_link = naming(link / "eval" / orphan.filename());
  auto e1 = f.run({"eval", "--repo", f.repo, "--build", "v1.0", "--suite", "testdata", "--policy", policy});
  INFO(e1.output);
  REQUIRE(e1.exit_code == 0);
  std::optional<common::ProcessResult> ended;
  for (int i = 0; i < 50 && !ended; ++i, std::this_thread::sleep_for(std::chrono::milliseconds(100)))
    ended = stuck.try_wait();
  REQUIRE(ended);
  CHECK(ended->signal == SIGKILL);
  ended.reset();
  for (int i = 0; i < 50 && !ended; ++i, std::this_thread::sleep_for(std::chrono::milliseconds(100)))
    ended = stuck_by_link.try_wait();
  REQUIRE(ended);
  CHECK(ended->signal == SIGKILL);
  CHECK_FALSE(working.try_wait());
  working.kill_group();
  CHECK_FALSE(std::filesystem::exists(orphan));
  CHECK(std::filesystem::exists(elsewhere));
  CHECK(std::filesystem::exists(live));
  CHECK(std::filesystem::exists(container));
  // Another container's, or a restarted one's, nothing written in for two
  // days: an orphan all the same (none of its compiles runs that long).
  auto stale = scratch(common::host_name(), gone, common::pid_namespace() + "2");
  auto two_days_ago = std::filesystem::file_time_type::clock::now() - std::chrono::hours(48);
  std::filesystem::last_write_time(stale / "m.o", two_days_ago);
  std::filesystem::last_write_time(stale, two_days_ago);
  auto e1b = f.run({"eval", "--repo", f.repo, "--build", "v1.0", "--suite", "testdata", "--policy", policy});
  REQUIRE(e1b.exit_code == 0);
  CHECK_FALSE(std::filesystem::exists(stale));
  CHECK(std::filesystem::exists(container));
  CHECK(e1.output.find("matches or beats the default on") != std::string::npos);
  auto counts = [&] {
    return f.psql("SELECT (SELECT count(*) FROM evaluations) || ' ' || (SELECT count(*) FROM module_results) || ' ' "
                  "|| (SELECT count(*) FROM measurements) || ' ' || (SELECT count(*) FROM benchmarks)");
  };
  auto first = counts();
  CHECK(first.rfind("1 10 ", 0) == 0);
  auto e2 = f.run({"eval", "--repo", f.repo, "--build", "v1.0", "--suite", "testdata", "--policy", policy, "--json"});
  REQUIRE(e2.exit_code == 0);
  CHECK(e2.output.find("\"uplift\"") != std::string::npos);
  CHECK(counts() == first);  // re-running the same (build, policy, suite) never duplicates rows
  CHECK(f.psql("SELECT status FROM evaluations") == "done");
  // callee_basic_block_count is never an input (LLVM 19's include-default bug): 37 of the 38 features sent.
  CHECK(f.psql("SELECT feature_report->>'bound' FROM builds WHERE feature_report IS NOT NULL") == "37");
}

TEST_CASE("eval and train refuse a corrupt policy, and eval a suite whose module changed, in one line") {
  Fixture f;
  std::ofstream(f.dir / "bad.policy") << "DWPOLICY\n1\nmeta 5\n{}";
  auto r = f.run({"eval", "--repo", f.repo, "--build", "v1.0", "--suite", "testdata", "--policy",
                  (f.dir / "bad.policy").string()});
  CHECK(r.exit_code == 2);
  CHECK(common::last_line(r.output).find("truncated") != std::string::npos);
  // Training from it fails the same way, before any compile.
  r = f.run({"train", "--repo", f.repo, "--build", "v1.0", "--suite", "testdata", "--warm-start",
             (f.dir / "bad.policy").string(), "--out", (f.dir / "child.policy").string()});
  CHECK(r.exit_code == 2);
  CHECK(common::last_line(r.output).find("truncated") != std::string::npos);
  CHECK(r.output.find("collecting") == std::string::npos);
  CHECK_FALSE(fs::exists(f.dir / "child.policy"));
  // Before the compiler is even looked for (building it can take hours).
  r = f.run({"train", "--repo", f.repo, "--build", "no-such-revision", "--suite", "testdata", "--warm-start",
             (f.dir / "bad.policy").string(), "--out", (f.dir / "child.policy").string()});
  CHECK(r.exit_code == 2);
  CHECK(common::last_line(r.output).find("truncated") != std::string::npos);
  // Where the policy would be written is checked before anything is trained.
  r = f.run({"train", "--repo", f.repo, "--build", "v1.0", "--suite", "testdata", "--out",
             (f.dir / "no/such/dir/p.policy").string()});
  CHECK(r.exit_code == 2);
  CHECK(common::last_line(r.output) == "driftwatch: --out " + (f.dir / "no/such/dir/p.policy").string() +
                                           ": the directory " + (f.dir / "no/such/dir").string() + " does not exist");
  CHECK(r.output.find("collecting") == std::string::npos);
  r = f.run({"train", "--repo", f.repo, "--build", "v1.0", "--suite", "testdata", "--name", "red\x1b[31m", "--out",
             (f.dir / "p.policy").string()});
  CHECK(r.exit_code == 2);
  CHECK(common::last_line(r.output) == "driftwatch: --name holds control characters; give a printable name");
  CHECK_FALSE(fs::exists(f.dir / "p.policy"));
  // A directory that is not a build, given with --repo, is named for what it lacks.
  r = f.run({"eval", "--repo", f.repo, "--build", f.dir.path().string(), "--suite", "testdata", "--policy",
             std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/frozen-test.policy"});
  CHECK(r.exit_code == 2);
  CHECK(common::last_line(r.output) == "driftwatch: --build " + f.dir.path().string() + " is neither a check-in of " + f.repo +
                                           " nor a cached build's directory (it has no result.json); without --repo "
                                           "a directory is a toolchain (with the recipe's artifacts)");

  std::ofstream(f.dir / "data/suites/testdata/ini.c.bc", std::ios::app) << "x";
  r = f.run({"eval", "--repo", f.repo, "--build", "v1.0", "--suite", "testdata", "--policy",
             std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/frozen-test.policy"});
  CHECK(r.exit_code == 2);
  CHECK(common::last_line(r.output).find("ini.c") != std::string::npos);
}

TEST_CASE("policy serve answers a compile started by someone else and cleans up") {
  Fixture f;
  auto policy = (f.dir / "p.policy").string();
  REQUIRE(f.run({"train", "--repo", f.repo, "--build", "v1.0", "--suite", "testdata", "--out", policy, "--iterations",
                 "0", "--clone-epochs", "20", "--search-trials", "2"})
              .exit_code == 0);
  auto channel = (f.dir / "chan").string();
  common::ProcessSpec serve;
  serve.argv = {DRIFTWATCH_BIN, "policy", "serve", "--policy", policy, "--channel", channel, "--once", "--timeout", "60"};
  serve.timeout = std::chrono::minutes(2);
  auto server = common::Child::start(serve).take();
  while (!std::filesystem::exists(channel + ".out")) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  // A second server on that channel would take its FIFOs over: refused, the first serves on.
  auto second = run_driftwatch({"policy", "serve", "--policy", policy, "--channel", channel, "--once"});
  CHECK(second.exit_code == 2);
  CHECK(second.output.find("another driftwatch policy serve is using channel " + channel) != std::string::npos);
  common::ProcessSpec cc;
  cc.argv = {DWCC_BIN, (f.dir / "data/suites/testdata/ini.c.bc").string(), "-o", (f.dir / "ini.o").string(), "-Oz",
             "-enable-ml-inliner=release", "-inliner-interactive-channel-base=" + channel};
  cc.timeout = std::chrono::minutes(1);
  auto compiled = common::run_process(cc).take();
  INFO(compiled.output);
  CHECK(compiled.ok());
  auto served = server.wait();
  INFO(served.output);
  CHECK(served.ok());
  CHECK(served.output.find("served a compilation:") != std::string::npos);
  // Every feature the policy reads is bound; the one it never reads is said to be ignored.
  CHECK(served.output.find("features: 1 new, ignored (callee_basic_block_count)") != std::string::npos);
  CHECK(served.output.find("filled with the training mean") == std::string::npos);
  CHECK_FALSE(std::filesystem::exists(channel + ".in"));
  CHECK_FALSE(std::filesystem::exists(channel + ".out"));

  // Left running (no --once), a server outlives a compile that speaks
  // nonsense and serves the next one.
  serve.argv = {DRIFTWATCH_BIN, "policy", "serve", "--policy", policy, "--channel", channel};
  server = common::Child::start(serve).take();
  while (!std::filesystem::exists(channel + ".out")) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  common::ProcessSpec nonsense;
  nonsense.argv = {"/bin/sh", "-c", "exec 4<\"$0.in\" 3>\"$0.out\"; echo 'not a header' >&3", channel};
  nonsense.timeout = std::chrono::minutes(1);
  REQUIRE(common::run_process(nonsense).take().ok());
  // A compile that starts while the server still closes the last session
  // can lose its FIFO ends (the channel's way, as with any two compiles in a
  // row): one more try, as a build would. A server that stopped serves neither.
  compiled = common::run_process(cc).take();
  if (!compiled.ok()) compiled = common::run_process(cc).take();
  INFO(compiled.output);
  CHECK(compiled.ok());
  kill(server.pid(), SIGTERM);
  served = server.wait();
  INFO(served.output);
  CHECK(served.exit_code == 0);
  CHECK(served.output.find("driftwatch: a compilation failed, serving on: ") != std::string::npos);
  CHECK(served.output.find("served a compilation:") != std::string::npos);

  // A compile the policy refuses, which then waits for an answer as LLVM 19
  // does (its read loop spins at end of file), is stopped rather than left
  // spinning until its build's timeout, and the server serves on. The
  // shipped gate needs the compiler's default decision, not sent here.
  serve.argv = {DRIFTWATCH_BIN, "policy", "serve", "--policy",
                std::string(DRIFTWATCH_SOURCE_DIR) + "/samples/policies/sample-compiler-v1.0.policy",
                "--channel", channel, "--default-slot", "callee_basic_block_count"};
  auto refusing = common::Child::start(serve).take();
  while (!std::filesystem::exists(channel + ".out")) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  common::ProcessSpec waiting;
  waiting.argv = {"/bin/sh", "-c",
                  "exec 4<\"$0.in\" 3>\"$0.out\"; "
                  "echo '{\"features\":[{\"name\":\"cost_estimate\",\"port\":0,\"shape\":[1],\"type\":\"int64_t\"}],"
                  "\"advice\":{\"name\":\"inlining_decision\",\"port\":0,\"shape\":[1],\"type\":\"int64_t\"}}' >&3; "
                  "while :; do read -r answer <&4; done",
                  channel};
  waiting.timeout = std::chrono::seconds(30);
  auto refused = common::run_process(waiting).take();
  CHECK_FALSE(refused.timed_out);
  CHECK(refused.signal == SIGTERM);
  kill(refusing.pid(), SIGTERM);
  auto refusal = refusing.wait();
  INFO(refusal.output);
  CHECK(refusal.exit_code == 0);
  CHECK(refusal.output.find("driftwatch: a compilation failed, serving on: policy sample-compiler-v1.0 ") !=
        std::string::npos);
  CHECK(refusal.output.find("(stopped the compiler, pid ") != std::string::npos);
  // It did not take the stopped compiler's leftovers for another compile.
  CHECK(refusal.output.find("malformed ML channel") == std::string::npos);

  // Options that could only fail every compile are refused at the start.
  auto no_slot = run_driftwatch({"policy", "serve", "--policy",
                                 std::string(DRIFTWATCH_SOURCE_DIR) + "/samples/policies/sample-compiler-v1.0.policy",
                                 "--channel", channel});
  CHECK(no_slot.exit_code == 2);
  CHECK(common::last_line(no_slot.output) ==
        "driftwatch: policy sample-compiler-v1.0 defers to the compiler's default decision: give --default-slot "
        "(callee_basic_block_count for LLVM 19, inlining_default for later LLVMs)");
  auto no_time = run_driftwatch({"policy", "serve", "--policy", policy, "--channel", channel, "--timeout", "0"});
  CHECK(no_time.exit_code != 0);
  CHECK(no_time.output.find("--timeout") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(channel + ".in"));
  auto bad = run_driftwatch({"policy", "serve", "--policy", policy, "--channel", (f.dir / "no/such/dir/ch").string()});
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("cannot create ML channel FIFO") != std::string::npos);
}

TEST_CASE("the demo sweeps the sampled check-ins and evaluates the policy at each") {
  Fixture f;
  auto policy = (f.dir / "p.policy").string();
  REQUIRE(f.run({"train", "--repo", f.repo, "--build", "v1.0", "--suite", "testdata", "--out", policy, "--iterations",
                 "0", "--clone-epochs", "20", "--search-trials", "2"})
              .exit_code == 0);
  auto suite = (f.dir / "data/suites/testdata").string();
  auto d = f.run({"demo", "--weeks", "8", "--every", "1m", "--suite", suite, "--policy", policy});
  INFO(d.output);
  REQUIRE(d.exit_code == 0);
  // 2025-12-01 + 8 weeks: the last check-ins of December and of January, and
  // whatever bisection measured between them.
  CHECK(d.output.find("sweep #1, project demo: 2 check-in(s)") != std::string::npos);
  CHECK(d.output.find("wins/ties/losses") != std::string::npos);
  CHECK(d.output.find("drift: ") != std::string::npos);
  CHECK(std::stoi(f.psql("SELECT count(*) FROM evaluations WHERE status = 'done'")) >= 2);
  CHECK(f.psql("SELECT count(*) FROM evaluations WHERE status <> 'done'") == "0");
  // It ends with the report and its five-line summary.
  CHECK(d.output.find("the report: " + (f.dir / "data/demo/report/index.html").string()) != std::string::npos);
  CHECK(d.output.find("  culprits found: ") != std::string::npos);
  // The decision is recorded as `decide` records it; the demo does not retrain but names the command.
  CHECK(f.psql("SELECT count(*) FROM retraining_decisions WHERE project = 'demo'") == "1");
  auto verdict = f.psql("SELECT verdict FROM retraining_decisions WHERE project = 'demo'");
  REQUIRE((verdict == "keep" || verdict == "retrain"));
  CHECK(d.output.find("  retraining: " + verdict + " (") != std::string::npos);
  CHECK(d.output.find("driftwatch retrain --config " + (f.dir / "data/demo/driftwatch.toml").string()) !=
        std::string::npos);
  // Only the held-out suite is built: the command names the training suite
  // first, or it would stop at once saying it is not built.
  CHECK(d.output.find(": driftwatch suite build train") != std::string::npos);
  CHECK(fs::exists(f.dir / "data/demo/report/report.json"));
}

TEST_CASE("an evaluation in which no module compiles is marked failed, with the compiler's error") {
  Fixture f;
  fs::create_directories(f.dir / "bad");
  std::ofstream(f.dir / "bad/asm.c") << "void f(void) { __asm__ volatile(\"not_an_instruction %eax\"); }\n";
  std::ofstream(f.dir / "bad/compile_commands.json")
      << "[{\"directory\": \"" << (f.dir / "bad").string() << "\", \"file\": \"asm.c\", \"command\": \"cc -Oz -c asm.c\"}]";
  auto s = f.run({"suite", "build", "--from-compile-commands", (f.dir / "bad/compile_commands.json").string(), "--name",
                  "bad"});
  REQUIRE_MESSAGE(s.exit_code == 0, s.output);
  auto policy = std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/frozen-test.policy";
  auto r = f.run({"eval", "--repo", f.repo, "--build", "v1.0", "--suite", "bad", "--policy", policy});
  INFO(r.output);
  CHECK(r.exit_code != 0);
  auto last = common::last_line(r.output);
  // Not even the default heuristic compiled it: the compiler's (or the code's) failure, not the policy's.
  CHECK(last.find("the compiler compiles no module even without the policy") != std::string::npos);
  CHECK(last.find("invalid instruction mnemonic 'not_an_instruction'") != std::string::npos);
  CHECK(f.psql("SELECT status FROM evaluations") == "failed");
  CHECK(f.psql("SELECT summary->>'error' FROM evaluations").find("compiles no module") != std::string::npos);
  CHECK(f.psql("SELECT summary->>'compiler_broken' FROM evaluations") == "true");
}

TEST_CASE("eval says over how many modules its geometric mean is, when some have no .text") {
  Fixture f;
  fs::create_directories(f.dir / "mixed");
  std::ofstream(f.dir / "mixed/table.c") << "const int table[4] = {1, 2, 3, 4};\n";  // data only: no .text
  std::string src = std::string(DRIFTWATCH_SOURCE_DIR) + "/samples/testdata";
  std::ofstream(f.dir / "mixed/compile_commands.json")
      << "[{\"directory\": \"" << (f.dir / "mixed").string()
      << "\", \"file\": \"table.c\", \"command\": \"cc -Oz -c table.c\"}, {\"directory\": \"" << src
      << "\", \"file\": \"ini.c\", \"command\": \"cc -Oz -c ini.c\"}]";
  auto s = f.run({"suite", "build", "--from-compile-commands", (f.dir / "mixed/compile_commands.json").string(),
                  "--name", "mixed"});
  REQUIRE_MESSAGE(s.exit_code == 0, s.output);
  auto policy = std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/frozen-test.policy";
  auto r = f.run({"eval", "--repo", f.repo, "--build", "v1.0", "--suite", "mixed", "--policy", policy});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("the geometric mean leaves out 1 module(s) with no .text under one heuristic or both (it is "
                      "over 1 of the 2;") != std::string::npos);
  CHECK(f.psql("SELECT summary->'summary'->>'zero_size' FROM evaluations") == "1");
}

TEST_CASE("policy serve refuses a channel path held by a regular file, which survives") {
  TempDir dir;
  auto channel = (dir / "notes").string();
  std::ofstream(channel + ".in") << "precious";
  auto r = run_driftwatch({"policy", "serve", "--policy",
                           std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/frozen-test.policy",
                           "--channel", channel, "--once", "--timeout", "5"});
  CHECK(r.exit_code == 2);
  CHECK(common::trim(r.output) == "driftwatch: refusing ML channel path " + channel + ".in: it exists and is not a FIFO");
  std::ifstream in(channel + ".in");
  std::string kept((std::istreambuf_iterator<char>(in)), {});
  CHECK(kept == "precious");
}
