// Real compilations through LLVM's interactive ML channel with the sample
// compiler (dwcc at its first check-in, built with the project).
#include <doctest/doctest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "common/process.h"
#include "common/text.h"
#include "evaluator/object_size.h"
#include "policy/compiler.h"
#include "tests/support/temp_dir.h"

using namespace policy;
namespace fs = std::filesystem;

namespace {

CompilerInvocation dwcc() {
  CompilerInvocation cc;
  cc.argv = {DWCC_BIN, "{input}", "-o", "{output}", "-Oz"};
  cc.timeout = std::chrono::seconds(60);
  return cc;
}

/// Pre-optimization bitcode of a test input, the way an MLGO corpus holds it.
fs::path bitcode(const testing::TempDir& dir, const std::string& name) {
  auto bc = dir / (name + ".bc");
  common::ProcessSpec clang;
  clang.argv = {"clang-19", "-Oz", "-Xclang", "-disable-llvm-passes", "-emit-llvm", "-c",
                std::string(DRIFTWATCH_SOURCE_DIR) + "/samples/testdata/" + name + ".c", "-o", bc.string()};
  auto r = common::run_process(clang).take();
  REQUIRE_MESSAGE(r.ok(), r.output);
  return bc;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int64_t text_size(const fs::path& o) { return evaluator::measure_object(o).take().text; }

bool no_fifos_left(const fs::path& dir) {
  for (const auto& e : fs::directory_iterator(dir))
    if (fs::is_fifo(e.status())) return false;
  return true;
}

/// A fake compiler in perl that opens the FIFOs at `base` in LLVM's order
/// ($in, $out), sends a header of one int64 feature, then runs `then`;
/// served by a constant runner for at most 100 s.
ChannelOutcome serve_fake_compiler(const fs::path& base, const std::string& then) {
  std::string fake =
      "open(my $in, '<', \"$ARGV[0].in\") or die; open(my $out, '>', \"$ARGV[0].out\") or die; "
      "$out->autoflush(1); print $out '{\"features\":[{\"name\":\"sroa_savings\",\"port\":0,\"shape\":[1],"
      "\"type\":\"int64_t\"}],\"advice\":{\"name\":\"inlining_decision\",\"port\":0,\"shape\":[1],"
      "\"type\":\"int64_t\"}}' . \"\\n\"; " +
      then;
  CompilerInvocation cc;
  cc.argv = {"perl", "-e", fake, base.string(), "{input}", "{output}"};
  auto runner = make_constant_runner(0);
  auto fifos = ChannelFifos::create(base).take();
  return compile_with_channel(cc.spec(base.parent_path() / "in", base.parent_path() / "out"), base, *runner,
                              std::chrono::seconds(100));
}

}  // namespace

TEST_CASE("echoing the default decision reproduces the default heuristic byte for byte") {
  testing::TempDir dir;
  auto cc = dwcc();
  auto slot = detect_default_slot(cc, dir / "probe");
  REQUIRE_MESSAGE(slot.ok(), slot.error().message);
  // Debian's LLVM 19.1.7 has the include-default bug (fixed upstream in 2025).
  CHECK(*slot == DefaultDecisionSlot::CalleeBasicBlockCount);
  for (const char* name : {"hashtable", "ini", "json", "sort", "utf8"}) {
    auto bc = bitcode(dir, name);
    auto plain = compile_default(cc, bc, dir / (std::string(name) + ".default.o"));
    REQUIRE_MESSAGE(plain.ok, plain.error);
    auto echo = make_echo_runner(*slot);
    auto served = compile_with_runner(cc, bc, dir / (std::string(name) + ".echo.o"), *echo, dir.path(), true);
    REQUIRE_MESSAGE(served.ok, served.error);
    CHECK(served.session.decisions > 0);
    CHECK(text_size(dir / (std::string(name) + ".echo.o")) == text_size(dir / (std::string(name) + ".default.o")));
    CHECK(read(dir / (std::string(name) + ".echo.o")) == read(dir / (std::string(name) + ".default.o")));
  }
  CHECK(no_fifos_left(dir.path()));
}

TEST_CASE("after a channel session (which ignores SIGPIPE here), the programs driftwatch starts see SIGPIPE as usual") {
  testing::TempDir dir;
  auto cc = dwcc();
  auto served = compile_with_runner(cc, bitcode(dir, "sort"), dir / "sort.o", *make_constant_runner(0), dir.path());
  REQUIRE_MESSAGE(served.ok, served.error);
  struct sigaction now {};
  sigaction(SIGPIPE, nullptr, &now);
  REQUIRE((now.sa_handler == SIG_IGN));  // the channel's writes must not kill driftwatch
  // Inherited across exec, an ignored SIGPIPE would make a build step's
  // `yes | head -1` fail on EPIPE (under pipefail) instead of ending quietly.
  common::ProcessSpec spec;
  spec.argv = {"grep", "^SigIgn:", "/proc/self/status"};
  auto r = common::run_process(spec).take();
  REQUIRE_MESSAGE(r.ok(), r.output);
  auto mask = std::stoull(common::trim(r.output.substr(r.output.find(':') + 1)), nullptr, 16);
  CHECK((mask & (1ull << (SIGPIPE - 1))) == 0);
}

TEST_CASE("the header lists LLVM 19's inliner features and the advice tensor") {
  testing::TempDir dir;
  DecisionLog log;
  auto runner = make_logging_runner(make_constant_runner(0), log);
  auto r = compile_with_runner(dwcc(), bitcode(dir, "ini"), dir / "ini.o", *runner, dir.path());
  REQUIRE_MESSAGE(r.ok, r.error);
  REQUIRE(r.session.header.has_value());
  CHECK(r.session.header->features.size() == 38);
  CHECK(r.session.header->find("sroa_savings") >= 0);
  CHECK(r.session.header->find("inlining_default") < 0);  // only with include-default
  CHECK(r.session.header->advice.name == "inlining_decision");
  CHECK(r.session.header->advice.type == "int64_t");
  CHECK(log.features.size() == r.session.decisions);
}

TEST_CASE("different answers give different code: never-inline vs always-inline") {
  testing::TempDir dir;
  auto bc = bitcode(dir, "json");
  auto never = make_constant_runner(0), always = make_constant_runner(1);
  REQUIRE(compile_with_runner(dwcc(), bc, dir / "never.o", *never, dir.path()).ok);
  REQUIRE(compile_with_runner(dwcc(), bc, dir / "always.o", *always, dir.path()).ok);
  CHECK(text_size(dir / "never.o") != text_size(dir / "always.o"));
}

TEST_CASE("a compiler that dies before opening the channel ends the session, no FIFO left") {
  testing::TempDir dir;
  auto echo = make_echo_runner(DefaultDecisionSlot::CalleeBasicBlockCount);
  auto r = compile_with_runner(dwcc(), dir / "missing.bc", dir / "x.o", *echo, dir.path(), true);
  CHECK_FALSE(r.ok);
  CHECK_FALSE(r.session.connected);
  CHECK(r.error.find("cannot read") != std::string::npos);
  CHECK(no_fifos_left(dir.path()));
}

TEST_CASE("a compiler that crashes mid-stream is reported, not waited for") {
  testing::TempDir dir;
  auto bc = bitcode(dir, "json");
  // A runner that kills the compiler at its third question (SIGKILL, like the
  // OOM killer: LLVM's handlers catch an outside SIGSEGV and carry on).
  struct Killer : Runner {
    int seen = 0;
    double advise(const Observation&) override {
      if (++seen == 3) kill(pid, SIGKILL);
      return 0;
    }
    pid_t pid = 0;
  } killer;
  CompilerInvocation cc = dwcc();
  auto base = dir / "ch";
  auto spec = cc.spec(bc, dir / "x.o", inliner_channel_flags(base, false));
  auto fifos = ChannelFifos::create(base).take();
  auto child = common::Child::start(spec).take();
  killer.pid = child.pid();
  std::string error;
  std::function<bool()> alive = [&] { return !child.try_wait().has_value(); };
  auto start = std::chrono::steady_clock::now();
  auto stats = serve_session(fifos, killer, start + std::chrono::seconds(30), alive, error);
  auto result = child.wait();
  CHECK(stats.connected);
  INFO(result.describe(), " ", result.output);
  CHECK(result.signal == SIGKILL);
  CHECK(killer.seen >= 3);
  // What compile_with_channel reports for it: the compiler's death, not a
  // protocol error, and not the deadline (reaching it would have set `error`).
  CHECK(error.empty());
  ChannelOutcome outcome{stats, result, error};
  CHECK_FALSE(outcome.ok());
  CHECK(outcome.describe().find("compiler killed by signal 9") == 0);
}

TEST_CASE("a hung compiler is killed at the timeout") {
  testing::TempDir dir;
  CompilerInvocation cc;
  // Never opens the channel; "finished" appears only if it is waited for.
  auto finished = dir / "finished";
  cc.argv = {"/bin/sh", "-c", "sleep 60; touch \"$0\"", finished.string(), "{input}", "{output}"};
  cc.timeout = std::chrono::seconds(1);
  auto runner = make_constant_runner(0);
  auto r = compile_with_runner(cc, dir / "in.bc", dir / "out.o", *runner, dir.path());
  CHECK_FALSE(r.ok);
  CHECK(r.timed_out);
  CHECK(r.failure == CompileFailure::TimedOut);
  CHECK_FALSE(fs::exists(finished));
  CHECK(no_fifos_left(dir.path()));
}

TEST_CASE("a garbage stream is a clear error and the compiler is stopped") {
  testing::TempDir dir;
  CompilerInvocation cc;
  // A fake compiler that opens the FIFOs in LLVM's order and writes garbage.
  cc.argv = {"/bin/sh", "-c", "exec 3<\"$0.in\" 4>\"$0.out\"; echo 'this is not json' >&4; sleep 60", "{input}"};
  cc.timeout = std::chrono::seconds(20);
  auto base = dir / "fake";
  cc.argv[3] = base.string();
  auto runner = make_constant_runner(0);
  auto spec = cc.spec(dir / "in", dir / "out");
  auto fifos = ChannelFifos::create(base).take();
  auto r = compile_with_channel(spec, base, *runner, std::chrono::seconds(20));
  CHECK(r.error.find("malformed ML channel header") == 0);
  CHECK(r.process.signal != 0);  // stopped by us, not waited for 60 s
  // So on every compile with this compiler: its protocol, not the machine's
  // failure to try again on every attempt.
  CHECK(r.failure == CompileFailure::Refused);
}

TEST_CASE("a compiler that stops reading its advice is refused within seconds, not waited on for ever") {
  testing::TempDir dir;
  auto base = dir / "unread";
  // Opens the FIFOs in LLVM's order, sends a header and 20000 questions, and
  // never reads an answer: once the answers fill the pipe, a write without a
  // deadline blocked driftwatch (and so the compiler, writing) for good.
  auto r = serve_fake_compiler(
      base,
      "for my $i (0 .. 20000) { print $out '{\"observation\":' . $i . '}' . \"\\n\" . pack('q', 1) . \"\\n\"; } "
      "sleep 120;");
  INFO(r.error);
  CHECK(r.error.find("the compiler stopped reading the policy's advice") != std::string::npos);
  CHECK(r.session.decisions > 1000);            // it was answered until the pipe filled
  CHECK(r.failure == CompileFailure::Refused);  // the compiler's protocol, on every attempt: not retried
  CHECK_FALSE(r.process.timed_out);
  CHECK(r.process.signal != 0);  // stopped by us, long before the deadline
}

TEST_CASE(
    "an observation shorter than the header says ends the compile in seconds, not at the timeout, and is tried again") {
  testing::TempDir dir;
  auto base = dir / "short";
  // One int64 feature: 8 bytes and a newline per observation; it sends 4 and waits for the answer.
  auto r = serve_fake_compiler(
      base, "print $out '{\"observation\":0}' . \"\\n\" . pack('l', 1); my $answer; read($in, $answer, 8); sleep 120;");
  INFO(r.error);
  CHECK(r.error ==
        "ML channel stream: observation 0 stopped after 4 of the 9 bytes the header's tensor sizes say, "
        "and the compiler sent no more for 10 s");
  // A compiler frozen mid-write (a suspended job) looks the same: tried
  // again, never stored as the policy's failure at once.
  CHECK(r.failure == CompileFailure::Channel);
  CHECK_FALSE(r.process.timed_out);
  CHECK(r.process.signal != 0);  // stopped by us, long before the deadline
}

TEST_CASE("a channel path that cannot be created is refused naming it") {
  testing::TempDir dir;
  auto runner = make_constant_runner(0);
  auto r = compile_with_runner(dwcc(), dir / "x.bc", dir / "x.o", *runner, dir / "no/such/dir");
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("cannot create ML channel FIFO " + (dir / "no/such/dir").string()) == 0);
  // The machine's (a file system without FIFOs fails every compile so): never
  // stored as the policy unable to run at a check-in.
  CHECK(r.failure == CompileFailure::Machine);
  CHECK(machine_failure(r));
}

TEST_CASE("a compiler that exits non-zero is reported with its message") {
  testing::TempDir dir;
  std::ofstream(dir / "bad.ll") << "this is not LLVM IR\n";
  auto runner = make_constant_runner(0);
  auto r = compile_with_runner(dwcc(), dir / "bad.ll", dir / "x.o", *runner, dir.path());
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("exit status 1") != std::string::npos);
  CHECK(r.error.find("dwcc: error") != std::string::npos);
}

TEST_CASE("a channel path that holds something other than a FIFO is refused naming it, and survives") {
  testing::TempDir dir;
  auto base = dir / "chan";
  std::ofstream(base.string() + ".out") << "precious";
  auto r = ChannelFifos::create(base);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "refusing ML channel path " + base.string() + ".out: it exists and is not a FIFO");
  CHECK(read(base.string() + ".out") == "precious");
  CHECK_FALSE(fs::exists(base.string() + ".in"));
  // A FIFO left by a killed run is ours to replace.
  fs::remove(base.string() + ".out");
  REQUIRE(mkfifo((base.string() + ".in").c_str(), 0600) == 0);
  auto again = ChannelFifos::create(base);
  CHECK(again.ok());
}

TEST_CASE("a FIFO at the channel path that belongs to another user is refused") {
  if (geteuid() != 0) return testing::skip_test("only root can give a FIFO to another user");
  testing::TempDir dir;
  auto base = dir / "chan";
  REQUIRE(mkfifo((base.string() + ".in").c_str(), 0600) == 0);
  const passwd* nobody = getpwnam("nobody");
  REQUIRE(nobody != nullptr);
  REQUIRE(chown((base.string() + ".in").c_str(), nobody->pw_uid, nobody->pw_gid) == 0);
  auto r = ChannelFifos::create(base);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "refusing ML channel path " + base.string() + ".in: it exists and is not a FIFO of ours");
  CHECK(fs::is_fifo(base.string() + ".in"));
}
