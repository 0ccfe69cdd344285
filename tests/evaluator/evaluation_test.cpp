// Real evaluations with the sample compiler: sizes checked against
// llvm-size-19, failures recorded while the rest goes on, policies that
// cannot run refused with their compatibility report.
#include "evaluator/evaluation.h"

#include <doctest/doctest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>

#include "common/process.h"
#include "common/text.h"
#include "evaluator/object_size.h"
#include "evaluator/suite_builder.h"
#include "policy/compiler.h"
#include "policy/runner.h"
#include "tests/support/temp_dir.h"

using namespace evaluator;
namespace fs = std::filesystem;

namespace {

/// The five C test inputs of samples/testdata as a suite, plus link group
/// "all" (a shared library of all of them).
SuiteBuildReport testdata_suite(const testing::TempDir& tmp, const std::string& level = "-Oz") {
  std::string dir = std::string(DRIFTWATCH_SOURCE_DIR) + "/samples/testdata";
  std::string json = "[";
  for (const char* f : {"hashtable", "ini", "json", "sort", "utf8"})
    json += std::string(json.size() > 1 ? "," : "") + "{\"directory\": \"" + dir + "\", \"file\": \"" + f +
            ".c\", \"command\": \"cc " + level + " -fPIC -c " + f + ".c\"}";
  std::ofstream(tmp / "compile_commands.json") << json << "]";
  CompileCommandsSuiteOptions o;
  o.name = "testdata";
  o.extract.jobs = 2;
  o.link_groups = {{"all", LinkKind::SharedLibrary, {"*.c"}, {}, {}}};
  return build_suite_from_compile_commands(tmp / "compile_commands.json", o, tmp / "suites").take();
}

policy::CompilerInvocation dwcc() {
  policy::CompilerInvocation cc;
  cc.argv = {DWCC_BIN, "{input}", "-o", "{output}", "-Oz"};
  cc.timeout = std::chrono::seconds(60);
  return cc;
}

std::int64_t llvm_size_text(const fs::path& object) {
  common::ProcessSpec s;
  s.argv = {"llvm-size-19", "-A", object.string()};
  auto r = common::run_process(s).take();
  REQUIRE_MESSAGE(r.ok(), r.output);
  std::int64_t text = 0;
  for (const auto& line : common::split(r.output, '\n')) {
    auto words = common::split(common::trim(line), ' ');
    std::vector<std::string> w;
    for (auto& x : words)
      if (!x.empty()) w.push_back(x);
    if (w.size() >= 2 && (w[0] == ".text" || w[0].rfind(".text.", 0) == 0)) text += std::stoll(w[1]);
  }
  return text;
}

EvaluationOptions options(const SuiteBuildReport& s, const fs::path& work, double constant_answer) {
  EvaluationOptions o;
  o.suite = &s.suite;
  o.suite_dir = s.dir;
  o.compiler = dwcc();
  o.work_dir = work;
  o.jobs = 2;
  o.learned = [constant_answer](policy::CompatReport*) { return policy::make_constant_runner(constant_answer); };
  return o;
}

}  // namespace

TEST_CASE("an evaluation measures every module under both heuristics, as llvm-size-19 does") {
  testing::TempDir tmp;
  auto suite = testdata_suite(tmp);
  REQUIRE(suite.suite.modules.size() == 5);
  auto r = evaluate(options(suite, tmp / "work", /*never inline*/ 0));
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  REQUIRE(r->modules.size() == 5);
  CHECK(r->failed == 0);
  for (const auto& m : r->modules) {
    INFO(m.name);
    REQUIRE(m.both_ok());
    CHECK(m.by_default.sizes.text == llvm_size_text(tmp / "work/default" / (m.name + ".o")));
    CHECK(m.learned.sizes.text == llvm_size_text(tmp / "work/learned" / (m.name + ".o")));
    CHECK(m.learned.decisions > 0);
    CHECK(m.by_default.decisions == 0);
    CHECK(m.by_default.seconds > 0);
  }
  // Never inlining makes this C code larger (the protocol notes: +7% on Lua).
  CHECK(r->summary.modules == 5);
  CHECK(r->summary.uplift < 0);
  CHECK(r->summary.losses > 0);
  // The shared library of all five links under both heuristics.
  REQUIRE(r->links.size() == 1);
  INFO(r->links[0].message);
  CHECK(r->links[0].ok);
  CHECK(r->links[0].default_text > 0);
  CHECK(r->linked_summary.modules == 1);
}

TEST_CASE("a corrupt bitcode module is recorded with the compiler's message and the rest goes on") {
  testing::TempDir tmp;
  auto suite = testdata_suite(tmp);
  // Corrupt one module after the manifest check, as a disk error would.
  std::ofstream(suite.dir / "json.c.bc", std::ios::trunc) << "BC\xc0\xde garbage";
  auto r = evaluate(options(suite, tmp / "work", 0));
  REQUIRE(r.ok());
  CHECK(r->failed == 1);
  CHECK(r->summary.modules == 4);
  for (const auto& m : r->modules) {
    if (m.name != "json.c") {
      CHECK(m.both_ok());
      continue;
    }
    CHECK(m.by_default.outcome == kOutcomeCrashed);
    CHECK(m.by_default.message.find("dwcc: error: cannot read") != std::string::npos);
    CHECK(m.learned.outcome == kOutcomeCrashed);
  }
  REQUIRE(r->links.size() == 1);
  CHECK_FALSE(r->links[0].ok);  // a member is missing
}

TEST_CASE("a policy that cannot run on this compiler is refused with its compatibility report") {
  testing::TempDir tmp;
  auto suite = testdata_suite(tmp);
  auto o = options(suite, tmp / "work", 0);
  // A runner for another feature set: what PolicyRunner reports and refuses.
  struct Foreign : policy::Runner {
    policy::CompatReport* report;
    explicit Foreign(policy::CompatReport* r) : report(r) {}
    common::Status begin(const policy::ChannelHeader& h) override {
      auto b = policy::bind_features({"eviction_x", "eviction_y", "sroa_savings"}, h);
      if (report) *report = b.report;
      return common::Error{"policy foreign was trained on another feature set"};
    }
    double advise(const policy::Observation&) override { return 0; }
  };
  o.learned = [](policy::CompatReport* r) { return std::unique_ptr<policy::Runner>(std::make_unique<Foreign>(r)); };
  auto r = evaluate(o);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("another feature set") != std::string::npos);
  CHECK(r.error().message.find("eviction_x") != std::string::npos);
}

namespace {

/// Makes `o`'s compiler dwcc behind a script that first runs `on_sort` (a
/// shell command) when it compiles sort.c, each compile limited to 2 s.
void delay_sort(EvaluationOptions& o, const testing::TempDir& tmp, const std::string& on_sort) {
  std::ofstream(tmp / "cc.sh") << "#!/bin/sh\ncase \"$1\" in *sort*) " << on_sort << ";; esac\nexec " << DWCC_BIN
                               << " \"$@\"\n";
  fs::permissions(tmp / "cc.sh", fs::perms::owner_all);
  o.compiler.argv[0] = (tmp / "cc.sh").string();
  o.compiler.timeout = std::chrono::seconds(2);
}

}  // namespace

TEST_CASE("a hung compile is recorded as a timeout and the rest goes on") {
  testing::TempDir tmp;
  auto suite = testdata_suite(tmp);
  auto o = options(suite, tmp / "work", 0);
  delay_sort(o, tmp, "sleep 60");  // a "compiler" that hangs on one module only
  auto r = evaluate(o);
  REQUIRE(r.ok());
  CHECK(r->failed == 1);
  auto sort = std::find_if(r->modules.begin(), r->modules.end(), [](const auto& m) { return m.name == "sort.c"; });
  REQUIRE(sort != r->modules.end());
  CHECK(sort->by_default.outcome == kOutcomeTimeout);
  // Tried again alone, it hung again: the compiler's, not the machine's load.
  CHECK(sort->by_default.message.starts_with(kFailedAgainAloneNote));
  CHECK_FALSE(sort->by_default.machine_failure());
  // The rest went on: every other module measured under both.
  CHECK(r->summary.modules == static_cast<int>(r->modules.size()) - 1);
}

TEST_CASE("a compile slowed past its limit while another job shares the machine is measured with a longer one") {
  testing::TempDir tmp;
  auto suite = testdata_suite(tmp);
  auto o = options(suite, tmp / "work", 0);
  delay_sort(o, tmp, "sleep 4");  // a compile of sort that takes 4 s, past its 2 s limit also alone
  auto sort_of = [](const EvaluationResult& r) {
    return *std::find_if(r.modules.begin(), r.modules.end(), [](const auto& m) { return m.name == "sort.c"; });
  };
  // Another worker's job runs on the machine: its load may explain that
  // much, so the last try has three times the limit, and the module is measured.
  o.machine_shared = [] { return true; };
  auto shared = evaluate(o);
  REQUIRE(shared.ok());
  CHECK(sort_of(*shared).both_ok());
  CHECK(shared->failed == 0);
  // The machine to itself: the same compile is the compiler's hang.
  o.machine_shared = [] { return false; };
  auto alone = evaluate(o);
  REQUIRE(alone.ok());
  CHECK(sort_of(*alone).by_default.outcome == kOutcomeTimeout);
  CHECK(sort_of(*alone).by_default.message.starts_with(kFailedAgainAloneNote));
}

TEST_CASE("a compile that times out once, as under load, is measured when tried again alone") {
  testing::TempDir tmp;
  auto suite = testdata_suite(tmp);
  auto o = options(suite, tmp / "work", 0);
  // A "compiler" whose first compile of sort hangs, and no other.
  delay_sort(o, tmp, "mkdir " + (tmp / "once").string() + " 2>/dev/null && sleep 60");
  auto r = evaluate(o);
  REQUIRE(r.ok());
  CHECK(fs::exists(tmp / "once"));  // it did time out once
  CHECK(r->failed == 0);
  CHECK(r->summary.modules == static_cast<int>(r->modules.size()));
}

namespace {

/// A suite of C sources written into tmp/src (name → code), built with clang-19.
SuiteBuildReport c_suite(const testing::TempDir& tmp, const std::vector<std::pair<std::string, std::string>>& files) {
  fs::create_directories(tmp / "src");
  std::string json = "[";
  for (const auto& [name, code] : files) {
    std::ofstream(tmp / "src" / name) << code;
    json += std::string(json.size() > 1 ? "," : "") + "{\"directory\": \"" + (tmp / "src").string() +
            "\", \"file\": \"" + name + "\", \"command\": \"cc -Oz -c " + name + "\"}";
  }
  std::ofstream(tmp / "compile_commands.json") << json << "]";
  CompileCommandsSuiteOptions o;
  o.name = "c";
  return build_suite_from_compile_commands(tmp / "compile_commands.json", o, tmp / "suites").take();
}

/// A "compiler" that drops LLVM's ML options before running dwcc, as a
/// check-in that renamed or broke them would; only for inputs matching `which`.
fs::path flag_dropping_dwcc(const testing::TempDir& tmp, const std::string& which) {
  auto script = tmp / "dwcc-ignoring-ml.sh";
  std::ofstream(script) << "#!/bin/sh\ncase \"$1\" in " << which
                        << ") for a; do shift; case \"$a\" in -enable-ml-inliner*|-inliner-interactive*) ;; "
                           "*) set -- \"$@\" \"$a\";; esac; done;; esac\nexec "
                        << DWCC_BIN << " \"$@\"\n";
  fs::permissions(script, fs::perms::owner_all);
  return script;
}

/// A runner that binds a made-up policy's features and answers "never inline".
struct Binding : policy::Runner {
  policy::CompatReport* report;
  explicit Binding(policy::CompatReport* r) : report(r) {}
  common::Status begin(const policy::ChannelHeader& h) override {
    if (report)
      *report = policy::bind_features({"callee_basic_block_count", "sroa_savings", "made_up_feature"}, h).report;
    return common::Ok{};
  }
  double advise(const policy::Observation&) override { return 0; }
};

}  // namespace

TEST_CASE("an unreadable object written again when compiled alone is the compiler's failure, not the machine's") {
  testing::TempDir tmp;
  auto suite = testdata_suite(tmp);
  auto o = options(suite, tmp / "work", 0);
  // dwcc, but sort's object is cut after its ELF header every time (its sections lie past its end).
  auto script = tmp / "dwcc-bad-object.sh";
  std::ofstream(script) << "#!/bin/sh\n"
                        << DWCC_BIN << " \"$@\" || exit $?\ncase \"$1\" in *sort*) "
                        << "head -c 100 \"$3\" > \"$3.cut\" && mv \"$3.cut\" \"$3\";; esac\n";
  fs::permissions(script, fs::perms::owner_all);
  o.compiler.argv[0] = script.string();
  auto r = evaluate(o);
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  bool seen = false;
  for (const auto& m : r->modules) {
    if (m.name.find("sort") == std::string::npos) {
      CHECK(m.both_ok());
      continue;
    }
    seen = true;
    for (const auto* h : {&m.by_default, &m.learned}) {
      CHECK(h->outcome == kOutcomeCrashed);
      INFO(h->message);
      CHECK(h->message.find("wrote an object that cannot be read, also when compiled again alone") !=
            std::string::npos);
      CHECK_FALSE(h->machine_failure());
    }
  }
  CHECK(seen);
}

TEST_CASE("a compiler that ignores the ML flags fails the evaluation: the policy was never consulted") {
  testing::TempDir tmp;
  auto suite = testdata_suite(tmp);
  auto o = options(suite, tmp / "work", 0);
  o.compiler.argv[0] = flag_dropping_dwcc(tmp, "*").string();
  auto r = evaluate(o);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("the compiler never consulted the policy: check the ML flags") != std::string::npos);
  CHECK_FALSE(r.error().transient);
}

TEST_CASE("a compiler that rejects the ML flags (renamed) fails the evaluation with its own message") {
  testing::TempDir tmp;
  auto suite = testdata_suite(tmp);
  auto o = options(suite, tmp / "work", 0);
  auto script = tmp / "dwcc-renamed.sh";
  std::ofstream(script) << "#!/bin/sh\nfor a; do shift; case \"$a\" in -enable-ml-inliner=*) set -- \"$@\" "
                           "-enable-ml-inliner-v2=release;; *) set -- \"$@\" \"$a\";; esac; done\nexec "
                        << DWCC_BIN << " \"$@\"\n";
  fs::permissions(script, fs::perms::owner_all);
  o.compiler.argv[0] = script.string();
  auto r = evaluate(o);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("the compiler never consulted the policy: check the ML flags") != std::string::npos);
  CHECK(r.error().message.find("enable-ml-inliner") != std::string::npos);  // LLVM: "Did you mean ...?"
}

TEST_CASE("a compiler whose ML mode crashes before the channel header fails the evaluation for good, saying why") {
  // The default compiles; every learned compile aborts before it opens the
  // channel (a model it cannot load). Not the machine's: another attempt
  // fails so too, so the job must not retry it night after night.
  testing::TempDir tmp;
  auto suite = testdata_suite(tmp);
  auto o = options(suite, tmp / "work", 0);
  auto script = tmp / "dwcc-ml-aborts.sh";
  std::ofstream(script) << "#!/bin/sh\nfor a; do case \"$a\" in -enable-ml-inliner=*) echo 'LLVM ERROR: cannot load "
                           "the inlining model' >&2; kill -ABRT $$;; esac; done\nexec "
                        << DWCC_BIN << " \"$@\"\n";
  fs::permissions(script, fs::perms::owner_all);
  o.compiler.argv[0] = script.string();
  auto r = evaluate(o);
  REQUIRE_FALSE(r.ok());
  INFO(r.error().message);
  CHECK(r.error().message.find("the compiler never consulted the policy") != std::string::npos);
  CHECK(r.error().message.find("LLVM ERROR: cannot load the inlining model") != std::string::npos);
  CHECK_FALSE(r.error().transient);
}

TEST_CASE("a whole evaluation that failed says whose it may be: the machine's alone, the policy's, or the "
          "compiler's") {
  testing::TempDir tmp;
  auto suite = testdata_suite(tmp);
  auto script = tmp / "dwcc-failing.sh";
  auto o = options(suite, tmp / "work", 0);
  o.compiler.argv[0] = script.string();
  // The compiler is `text`, a shell script; the evaluation must fail.
  auto failing_with = [&](const std::string& text) {
    std::ofstream(script) << text;
    fs::permissions(script, fs::perms::owner_all);
    auto r = evaluate(o);
    REQUIRE_FALSE(r.ok());
    return r;
  };
  SUBCASE("the OOM killer: transient, so a sweep retries the job; on its last attempt a broken compiler") {
    auto r = failing_with("#!/bin/sh\nkill -9 $$\n");
    CHECK(r.error().transient);
    CHECK(r.error().message.find("killed by signal 9") != std::string::npos);
    // Never the policy's: the default, which never asks it, was killed. On
    // every attempt, the compiler's own memory is as likely as the machine.
    CHECK(r.error().message.rfind(std::string(kCompilerBrokenError) + " (the machine failed, or it hung or was killed "
                                  "on, every default compile", 0) == 0);
    CHECK_FALSE(r.error().machine_only);
  }
  SUBCASE("compiles with the policy killed before they ask it anything: the machine's alone") {
    auto r = failing_with(std::string("#!/bin/sh\ncase \"$*\" in *interactive-channel*) kill -9 $$;; esac\nexec ") +
                          DWCC_BIN + " \"$@\"\n");
    CHECK(r.error().transient);
    CHECK(r.error().machine_only);
    INFO(r.error().message);
    CHECK(r.error().message.find("learned: compiler-crashed: compiler killed by signal 9") != std::string::npos);
  }
  SUBCASE("compiles with the policy killed after they asked it: the policy may have caused it, so a last attempt "
          "stores it") {
    // As the OOM killer in code generation, after the inliner took the policy's decisions.
    auto r = failing_with(std::string("#!/bin/sh\ncase \"$*\" in *interactive-channel*) ") + DWCC_BIN +
                          " \"$@\"; kill -9 $$;; esac\nexec " + DWCC_BIN + " \"$@\"\n");
    CHECK(r.error().transient);
    CHECK_FALSE(r.error().machine_only);
    INFO(r.error().message);
    CHECK(r.error().message.find("learned: compiler-crashed: compiler killed by signal 9") != std::string::npos);
  }
  SUBCASE("driftwatch fails on every compile with the policy: the machine's alone") {
    o.compiler.argv[0] = DWCC_BIN;
    o.learned = [](policy::CompatReport*) -> std::unique_ptr<policy::Runner> {
      throw std::runtime_error("cannot create the channel directory");
    };
    auto r = evaluate(o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().transient);
    CHECK(r.error().machine_only);
    CHECK(r.error().message.find("cannot create the channel directory") != std::string::npos);
  }
  SUBCASE("every default hangs: the compiler hangs by itself, not the machine's alone") {
    o.compiler.timeout = std::chrono::seconds(1);
    auto r = failing_with("#!/bin/sh\nsleep 60\n");
    CHECK(r.error().transient);  // the load may pass: tried again
    CHECK_FALSE(r.error().machine_only);
    CHECK(r.error().message.rfind(std::string(kCompilerBrokenError) + " (the machine failed, or it hung or was killed "
                                  "on, every default compile; first: ", 0) == 0);
    CHECK(r.error().message.find(": timeout: ") != std::string::npos);
  }
  SUBCASE("a module's bitcode gone from the suite: the suite's fault, never stored as the check-in's") {
    o.compiler.argv[0] = DWCC_BIN;
    auto bc = o.suite_dir / (suite.suite.modules[0].name + ".bc");
    REQUIRE(fs::remove(bc));
    auto r = evaluate(o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().machine_only);
    CHECK(r.error().message.find(suite.suite.modules[0].name + ".bc: ") != std::string::npos);
    CHECK(r.error().message.find("build the suite again") != std::string::npos);
  }
  SUBCASE("the compiler's binary is gone (a cache entry removed under it): transient too") {
    auto r = evaluate(o);  // the script was never written
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().transient);
    CHECK(r.error().machine_only);
    CHECK(r.error().message.find("internal-error: cannot run ") != std::string::npos);
  }
  SUBCASE("the compiler fails because the disk is full: the machine's doing, transient") {
    // The real compiler, writing its objects to a full disk (a 64 KiB tmpfs, filled).
    if (geteuid() != 0) return testing::skip_test("only root can mount a small tmpfs");
    auto disk = tmp / "disk";
    fs::create_directories(disk);
    REQUIRE(mount("tmpfs", disk.c_str(), "tmpfs", 0, "size=64k") == 0);
    struct Unmount {
      fs::path dir;
      ~Unmount() { umount2(dir.c_str(), MNT_DETACH); }
    } unmount{disk};
    {
      std::ofstream fill(disk / "fill", std::ios::binary);
      std::string block(4096, 'x');
      for (int i = 0; i < 32 && fill.write(block.data(), block.size()).flush(); ++i) {
      }
    }
    o.compiler.argv[0] = DWCC_BIN;
    o.work_dir = disk / "work";
    auto r = evaluate(o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().transient);
    CHECK(r.error().message.find("the machine failed") != std::string::npos);
    // LLVM's own words: "LLVM ERROR: IO failure on output stream: No space left on device".
    CHECK(r.error().message.find("No space left on device") != std::string::npos);
    CHECK(r.error().machine_only);
  }
  SUBCASE("the compiler fails on its own: the check-in's result") {
    auto r = failing_with("#!/bin/sh\necho 'error: no such pass' >&2\nexit 1\n");
    CHECK_FALSE(r.error().transient);
    // Under the default heuristic too: the compiler is broken, not the policy.
    CHECK(r.error().message.rfind(std::string(kCompilerBrokenError) + " (first: ", 0) == 0);
    CHECK(r.error().message.find("error: no such pass") != std::string::npos);
  }
  SUBCASE("a compiler that writes something other than an object (a recipe asking for bitcode) is broken") {
    // Taken for the machine's, it would fail the job on every attempt and store nothing, every night.
    auto r = failing_with("#!/bin/sh\nin=$1\nwhile [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\n"
                          "cp \"$in\" \"$out\"\n");
    CHECK_FALSE(r.error().transient);
    CHECK_FALSE(r.error().machine_only);
    INFO(r.error().message);
    CHECK(r.error().message.rfind(std::string(kCompilerBrokenError) + " (first: ", 0) == 0);
    CHECK(r.error().message.find("wrote LLVM bitcode, not an object file") != std::string::npos);
  }
  SUBCASE("the compiler fails on its own and hangs on one module: still the compiler's, never the policy's") {
    o.compiler.timeout = std::chrono::seconds(2);
    auto r = failing_with("#!/bin/sh\ncase \"$1\" in *sort*) sleep 60;; esac\necho 'error: no such pass' >&2\n"
                          "exit 1\n");
    // The hang came back when sort was compiled again alone, the load gone:
    // the compiler's too, so no attempt more is spent on it.
    CHECK_FALSE(r.error().transient);
    CHECK_FALSE(r.error().machine_only);
    CHECK(r.error().message.rfind(std::string(kCompilerBrokenError) + " (first: ", 0) == 0);
    CHECK(r.error().message.find("error: no such pass") != std::string::npos);
  }
}

TEST_CASE("a compile the machine failed once is tried again, and the module is measured") {
  testing::TempDir tmp;
  auto suite = testdata_suite(tmp);
  auto o = options(suite, tmp / "work", 0);
  auto script = tmp / "dwcc-disk-full-once.sh";
  auto mark = tmp / "failed-once";
  // The first compile of sort hits a full disk; the disk has room again after.
  std::ofstream(script) << "#!/bin/sh\ncase \"$1\" in *sort*) if [ ! -e " << mark.string() << " ]; then touch "
                        << mark.string()
                        << "; echo 'LLVM ERROR: IO failure on output stream: No space left on device' >&2; exit 1; "
                           "fi;; esac\nexec "
                        << DWCC_BIN << " \"$@\"\n";
  fs::permissions(script, fs::perms::owner_all);
  o.compiler.argv[0] = script.string();
  auto r = evaluate(o);
  REQUIRE(r.ok());
  CHECK(fs::exists(mark));
  for (const auto& m : r->modules) {
    INFO(m.name);
    CHECK(m.both_ok());
  }
  CHECK(r->summary.modules == static_cast<int>(r->modules.size()));
}

TEST_CASE(
    "a compile out of memory once is tried again and measured, and the policy's out of memory every time is its "
    "failure") {
  testing::TempDir tmp;
  auto suite = testdata_suite(tmp);
  auto mark = tmp / "oom-once";
  auto oom = std::string("echo 'LLVM ERROR: out of memory' >&2; echo 'Allocation failed' >&2; exit 1");
  // Once: the first compile of sort runs out of memory (a busy machine), the next does not.
  auto once = tmp / "dwcc-oom-once.sh";
  std::ofstream(once) << "#!/bin/sh\ncase \"$1\" in *sort*) if [ ! -e " << mark.string() << " ]; then touch "
                      << mark.string() << "; " << oom << "; fi;; esac\nexec " << DWCC_BIN << " \"$@\"\n";
  fs::permissions(once, fs::perms::owner_all);
  auto o = options(suite, tmp / "work", 0);
  o.compiler.argv[0] = once.string();
  auto r = evaluate(o);
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  CHECK(fs::exists(mark));
  for (const auto& m : r->modules) {
    INFO(m.name);
    CHECK(m.both_ok());
  }
  // Every time, and only under the policy: a policy that inlines without end.
  auto always = tmp / "dwcc-oom-learned.sh";
  std::ofstream(always) << "#!/bin/sh\ncase \"$1 $*\" in *sort*interactive-channel*) " << oom << ";; esac\nexec "
                        << DWCC_BIN << " \"$@\"\n";
  fs::permissions(always, fs::perms::owner_all);
  auto o2 = options(suite, tmp / "work2", 0);
  o2.compiler.argv[0] = always.string();
  auto r2 = evaluate(o2);
  REQUIRE_MESSAGE(r2.ok(), r2.error().message);
  int failed = 0;
  for (const auto& m : r2->modules) {
    INFO(m.name, ": ", m.learned.message);
    if (m.name.find("sort") == std::string::npos) {
      CHECK(m.both_ok());
      continue;
    }
    ++failed;
    CHECK(m.learned_failed());
    CHECK(m.learned.message.find("LLVM ERROR: out of memory") != std::string::npos);
  }
  CHECK(failed == 1);
}

TEST_CASE("more compiles failed by the machine than are tried again alone are counted and said, not retried") {
  testing::TempDir tmp;
  auto suite = testdata_suite(tmp);
  auto o = options(suite, tmp / "work", 0);
  // The first two compiles of three modules are SIGKILLed (an OOM killer
  // under load): six machine failures, over the budget of four for five modules.
  auto script = tmp / "dwcc-killed-twice.sh";
  std::ofstream(script) << "#!/bin/sh\ncase \"$(basename \"$1\")\" in hashtable*|ini*|json*) n=" << tmp.path().string()
                        << "/$(basename \"$1\").count; echo x >> \"$n\"; [ \"$(wc -l < \"$n\")\" -le 2 ] && kill -9 $$;; "
                           "esac\nexec "
                        << DWCC_BIN << " \"$@\"\n";
  fs::permissions(script, fs::perms::owner_all);
  o.compiler.argv[0] = script.string();
  auto r = evaluate(o);
  REQUIRE(r.ok());
  CHECK(r->machine_failures_untried == 6);
  CHECK(r->failed == 3);
  CHECK(r->summary.modules == 2);
  REQUIRE_FALSE(r->warnings.empty());
  CHECK(r->warnings.back().find("the machine failed 6 compiles") != std::string::npos);
}

TEST_CASE("a learned compile that failed outside the compiler is not the policy's loss, but one the policy can cause is") {
  evaluator::ModuleResult m;
  m.learned.outcome = evaluator::kOutcomeInternalError;
  CHECK_FALSE(m.learned_failed());
  m.learned.outcome = evaluator::kOutcomeBadObject;
  CHECK_FALSE(m.learned_failed());
  m.learned.outcome = evaluator::kOutcomeCrashed;
  m.learned.message = std::string("compiler ") + policy::kSigkillMarker + "(SIGKILL)";
  CHECK(m.learned_failed());  // still killed when tried alone: the policy's decisions can exhaust memory
  m.learned.message = "compiler exited 1: LLVM ERROR: broken module";
  CHECK(m.learned_failed());
  m.learned.outcome = evaluator::kOutcomeTimeout;  // a policy that inlines without end
  CHECK(m.learned_failed());
  m.by_default.outcome = evaluator::kOutcomeTimeout;  // both: not measured, nobody's loss
  CHECK_FALSE(m.learned_failed());
}

TEST_CASE("a module whose learned compile never opened the channel is counted apart and left out of the uplift") {
  testing::TempDir tmp;
  auto suite = testdata_suite(tmp);
  auto o = options(suite, tmp / "work", 0);
  o.compiler.argv[0] = flag_dropping_dwcc(tmp, "*sort*").string();
  auto r = evaluate(o);
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  CHECK(r->not_consulted == 1);
  CHECK(r->failed == 0);
  CHECK(r->summary.modules == 4);
  for (const auto& m : r->modules) {
    INFO(m.name);
    CHECK(m.by_default.ok());
    CHECK(m.learned.outcome == (m.name == "sort.c" ? kOutcomeNotConsulted : kOutcomeOk));
  }
}

TEST_CASE("a module without call sites asks no decision yet consults the policy: ok, not 'not consulted'") {
  testing::TempDir tmp;
  auto suite =
      c_suite(tmp, {{"leaf.c", "int twice(int x) { return 2 * x; }\n"},
                    {"caller.c", "static int sq(int x) { return x * x; }\nint f(int y) { return sq(y) + 1; }\n"}});
  auto r = evaluate(options(suite, tmp / "work", 0));
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  CHECK(r->not_consulted == 0);
  CHECK(r->failed == 0);
  REQUIRE(r->modules.size() == 2);
  for (const auto& m : r->modules) {
    INFO(m.name);
    CHECK(m.learned.ok());
    CHECK(m.learned.consulted);
  }
  auto leaf = std::find_if(r->modules.begin(), r->modules.end(), [](const auto& m) { return m.name == "leaf.c"; });
  REQUIRE(leaf != r->modules.end());
  CHECK(leaf->learned.decisions == 0);
}

TEST_CASE("refused, broken-channel and internal failures are distinct outcomes, and the rest goes on") {
  testing::TempDir tmp;
  auto suite = testdata_suite(tmp);
  auto o = options(suite, tmp / "work", 0);
  struct Refusing : policy::Runner {
    common::Status begin(const policy::ChannelHeader&) override { return common::Error{"no, thank you"}; }
    double advise(const policy::Observation&) override { return 0; }
  };
  struct Throwing : policy::Runner {
    double advise(const policy::Observation&) override { throw std::runtime_error("tensor shape mismatch"); }
  };
  // Each module's learned compiles (its report is its own) meet the same
  // runner every time: the first three modules' fail, also when tried again.
  struct Assigned {
    std::mutex mutex;
    std::map<policy::CompatReport*, int> kind;
    int calls = 0;
  };
  auto assigned = std::make_shared<Assigned>();
  o.learned = [assigned](policy::CompatReport* module) -> std::unique_ptr<policy::Runner> {
    int kind;
    {
      std::lock_guard<std::mutex> lock(assigned->mutex);
      ++assigned->calls;
      kind = assigned->kind.emplace(module, static_cast<int>(assigned->kind.size())).first->second;
    }
    switch (kind) {
      case 0: return std::make_unique<Refusing>();
      case 1: return std::make_unique<Throwing>();
      case 2:
        throw fs::filesystem_error("cannot copy the policy", std::make_error_code(std::errc::no_space_on_device));
      default: return policy::make_constant_runner(0);
    }
  };
  auto r = evaluate(o);
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  // The broken channel and driftwatch's own failure may be the machine's:
  // each was tried once more; a refusal is the policy's answer.
  CHECK(assigned->calls == static_cast<int>(r->modules.size()) + 2);
  CHECK(r->failed == 3);
  CHECK(r->summary.modules == 2);
  std::map<std::string, std::string> seen;
  for (const auto& m : r->modules) {
    CHECK(m.by_default.ok());
    if (!m.learned.ok()) seen[m.learned.outcome] = m.learned.message;
  }
  REQUIRE(seen.size() == 3);
  CHECK(seen[kOutcomeRefused] == "no, thank you");
  CHECK(seen[kOutcomeChannelError].find("the policy failed: tensor shape mismatch") != std::string::npos);
  CHECK(seen[kOutcomeInternalError].find("cannot copy the policy") != std::string::npos);
}

TEST_CASE("a policy every compile refuses fails the evaluation instead of storing N crashes and uplift 0") {
  testing::TempDir tmp;
  auto suite = testdata_suite(tmp);
  auto o = options(suite, tmp / "work", 0);
  // A runner that refuses every compilation at its header, as a policy made
  // for another compiler does.
  struct Refusing : policy::Runner {
    common::Status begin(const policy::ChannelHeader&) override {
      return common::Error{"this policy wants a feature the compiler does not send"};
    }
    double advise(const policy::Observation&) override { return 0; }
  };
  o.learned = [](policy::CompatReport*) { return std::make_unique<Refusing>(); };
  auto r = evaluate(o);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("no module compiled under both heuristics") != std::string::npos);
  CHECK(r.error().message.find(std::string("learned: ") + kOutcomeRefused) != std::string::npos);
  CHECK(r.error().message.find("wants a feature the compiler does not send") != std::string::npos);
}

TEST_CASE("the feature report merges every learned compile, even when the first module fails") {
  testing::TempDir tmp;
  auto suite = testdata_suite(tmp);
  REQUIRE(suite.suite.modules[0].name == "hashtable.c");
  std::ofstream(suite.dir / "hashtable.c.bc", std::ios::trunc) << "BC\xc0\xde garbage";
  auto o = options(suite, tmp / "work", 0);
  o.learned = [](policy::CompatReport* r) { return std::unique_ptr<policy::Runner>(std::make_unique<Binding>(r)); };
  auto r = evaluate(o);
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  CHECK(r->modules[0].learned.outcome == kOutcomeCrashed);
  CHECK(r->compat.known);
  CHECK(r->compat.missing == std::vector<std::string>{"made_up_feature"});
  CHECK(r->compat.bound == 2);
  CHECK(r->compat.summary().find("made_up_feature") != std::string::npos);
}

TEST_CASE("without any learned compile reporting its features, the report is unknown, not all bound") {
  testing::TempDir tmp;
  auto suite = testdata_suite(tmp);
  auto r = evaluate(options(suite, tmp / "work", 0));  // the constant runner binds nothing
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  CHECK_FALSE(r->compat.known);
  CHECK(r->compat.to_json() == R"({"state":"unknown"})");
  CHECK(r->compat.summary() != "all features bound");
}

TEST_CASE("modules with inline assembly compile under both heuristics") {
  testing::TempDir tmp;
  auto suite = c_suite(tmp, {{"asm.c", R"(
__asm__(".globl dw_marker\ndw_marker:\n  ret\n");
static inline unsigned cycles(void) {
  unsigned lo, hi;
  __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
  return lo ^ hi;
}
unsigned spin(int n) {
  unsigned s = 0;
  for (int i = 0; i < n; ++i) s += cycles();
  return s;
}
)"}});
  auto r = evaluate(options(suite, tmp / "work", 1));
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  const auto& m = r->modules.at(0);
  INFO(m.by_default.message, " / ", m.learned.message);
  CHECK(m.by_default.ok());
  CHECK(m.learned.ok());
  CHECK(m.learned.decisions > 0);
}

TEST_CASE("a compile that hits an LLVM ERROR is reported with that line, not the stack dump's last") {
  testing::TempDir tmp;
  // An AArch64 intrinsic in an x86-64 module: instruction selection calls report_fatal_error.
  std::ofstream(tmp / "isel.ll") << "target triple = \"x86_64-unknown-linux-gnu\"\n"
                                    "declare i64 @llvm.aarch64.irg(ptr, i64)\n"
                                    "define i64 @f(ptr %p) {\n  %r = call i64 @llvm.aarch64.irg(ptr %p, i64 0)\n"
                                    "  ret i64 %r\n}\n";
  const std::string line = "LLVM ERROR: Cannot select: intrinsic %llvm.aarch64.irg";
  auto d = policy::compile_default(dwcc(), tmp / "isel.ll", tmp / "d.o");
  REQUIRE_FALSE(d.ok);
  CHECK(d.failure == policy::CompileFailure::CompilerFailed);
  CHECK(d.error.size() >= line.size());
  CHECK(d.error.substr(d.error.size() - line.size()) == line);
  auto runner = policy::make_constant_runner(0);
  auto l = policy::compile_with_runner(dwcc(), tmp / "isel.ll", tmp / "l.o", *runner, tmp.path());
  REQUIRE_FALSE(l.ok);
  CHECK(l.failure == policy::CompileFailure::CompilerFailed);
  CHECK(l.error.substr(l.error.size() - std::min(l.error.size(), line.size())) == line);
}

TEST_CASE("a compile that exits 0 but writes no object fails as the compiler's, never measuring an old object") {
  testing::TempDir tmp;
  auto suite = testdata_suite(tmp);
  auto o = options(suite, tmp / "work", 0);
  REQUIRE(evaluate(o).ok());  // leaves every module's objects in the work directory
  REQUIRE(fs::exists(tmp / "work/default/sort.c.o"));
  REQUIRE(fs::exists(tmp / "work/learned/sort.c.o"));
  // A "compiler" that claims success on one module without writing it (an
  // empty file where the compiler was behaves so for every module).
  auto script = tmp / "silent.sh";
  std::ofstream(script) << "#!/bin/sh\ncase \"$1\" in */sort.c.bc) exit 0;; esac\nexec " << DWCC_BIN << " \"$@\"\n";
  fs::permissions(script, fs::perms::owner_all);
  o.compiler.argv[0] = script.string();
  auto r = evaluate(o);
  REQUIRE(r.ok());
  auto sort = std::find_if(r->modules.begin(), r->modules.end(), [](const auto& m) { return m.name == "sort.c"; });
  REQUIRE(sort != r->modules.end());
  for (const auto* h : {&sort->by_default, &sort->learned}) {
    CHECK(h->outcome == kOutcomeCrashed);
    CHECK(h->message.rfind("the compiler exited 0 but wrote no object (" + (tmp / "work").string(), 0) == 0);
    CHECK_FALSE(h->machine_failure());
  }
  CHECK(r->summary.modules == static_cast<int>(r->modules.size()) - 1);
}

namespace {

/// Answers the compiler's default decision, except (when `depart`) the
/// opposite at a module's first call site.
struct DefaultFollower : policy::Runner {
  policy::DefaultDecisionSlot slot;
  bool depart;
  int index = -1, seen = 0;
  DefaultFollower(policy::DefaultDecisionSlot s, bool d) : slot(s), depart(d) {}
  common::Status begin(const policy::ChannelHeader& h) override {
    index = h.find(policy::slot_feature_name(slot));
    seen = 0;
    return index < 0 ? common::Status(common::Error{"no default decision"}) : common::Status(common::Ok{});
  }
  double advise(const policy::Observation& o) override {
    bool by_default = o.features[index][0] > 0.5;
    return (depart && seen++ == 0) ? !by_default : by_default;
  }
  bool wants_default_decision() const override { return true; }
};

EvaluationOptions following_default(const SuiteBuildReport& s, const fs::path& work, bool depart) {
  auto o = options(s, work, 0);
  o.compiler.share_agreeing_defaults = true;  // dwcc at -Oz, as its recipe says
  o.default_slot = policy::detect_default_slot(o.compiler, work / "probe").take();
  auto slot = *o.default_slot;
  o.learned = [slot, depart](policy::CompatReport*) {
    return std::unique_ptr<policy::Runner>(std::make_unique<DefaultFollower>(slot, depart));
  };
  return o;
}

}  // namespace

TEST_CASE("where the policy takes every default decision, its object is the default's: the same figures, fewer "
          "compiles") {
  testing::TempDir tmp;
  auto suite = testdata_suite(tmp);
  auto shared = evaluate(following_default(suite, tmp / "shared", false));
  auto o = following_default(suite, tmp / "all", false);
  o.compile_every_default = true;
  auto all = evaluate(o);
  REQUIRE_MESSAGE(shared.ok(), shared.error().message);
  REQUIRE_MESSAGE(all.ok(), all.error().message);
  CHECK(all->defaults_shared == 0);
  // Five modules: the middle three of them are compiled anyway, as the check.
  CHECK(shared->defaults_checked == kSharedDefaultChecks);
  CHECK(shared->defaults_shared == 5 - kSharedDefaultChecks);
  CHECK(shared->warnings.empty());
  for (std::size_t i = 0; i < shared->modules.size(); ++i) {
    const auto &s = shared->modules[i], &a = all->modules[i];
    INFO(s.name);
    REQUIRE(s.both_ok());
    CHECK(s.learned.decisions > 0);
    CHECK(s.by_default.sizes.text == a.by_default.sizes.text);
    CHECK(s.by_default.sizes.code == a.by_default.sizes.code);
    CHECK(s.by_default.sizes.text == llvm_size_text(tmp / "shared/default" / (s.name + ".o")));
    CHECK(s.by_default.shared == (s.by_default.seconds == 0));
  }
  CHECK(shared->summary.ties == 5);
  REQUIRE(shared->links.size() == 1);
  CHECK(shared->links[0].ok);
  CHECK(shared->links[0].default_text == all->links[0].default_text);
  // A compiler whose recipe does not vouch for it (at -O2 LLVM's ML size cap
  // stops the ML inliner early) has every default compiled.
  auto unvouched = following_default(suite, tmp / "unvouched", false);
  unvouched.compiler.share_agreeing_defaults = false;
  auto r = evaluate(unvouched);
  REQUIRE(r.ok());
  CHECK(r->defaults_shared == 0);
  CHECK(r->defaults_checked == 0);
  // Nor does it vouch for bitcode made at -O2 (`suite build --opt-level
  // keep`), where the size cap stops the ML inliner on the default's path:
  // an outsider measured pixman's defaults 4,208 bytes short that way.
  testing::TempDir o2_tmp;
  auto at_o2 = testdata_suite(o2_tmp, "-O2");
  auto o2 = evaluate(following_default(at_o2, o2_tmp / "work", false));
  REQUIRE_MESSAGE(o2.ok(), o2.error().message);
  CHECK(o2->defaults_shared == 0);
  CHECK(o2->defaults_checked == 0);
  for (const auto& m : o2->modules) CHECK(m.by_default.seconds > 0);
}

TEST_CASE("a module where the policy departed from the default once has its default compiled") {
  testing::TempDir tmp;
  auto suite = testdata_suite(tmp);
  auto r = evaluate(following_default(suite, tmp / "work", true));
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  CHECK(r->defaults_shared == 0);
  for (const auto& m : r->modules) {
    INFO(m.name);
    CHECK_FALSE(m.by_default.shared);
    CHECK(m.by_default.seconds > 0);
  }
}

TEST_CASE("a compiler whose ML mode makes another object than its default, the policy agreeing, has every default "
          "compiled and says so") {
  testing::TempDir tmp;
  auto suite = testdata_suite(tmp);
  // The ML inliner stops asking once the module has grown at all (LLVM's
  // size cap at 0), so from there on it inlines less than the default does.
  auto script = tmp / "dwcc-ml-capped.sh";
  std::ofstream(script) << "#!/bin/sh\ncase \"$*\" in *-enable-ml-inliner*) set -- \"$@\" "
                           "-ml-advisor-size-increase-threshold=0;; esac\nexec "
                        << DWCC_BIN << " \"$@\"\n";
  fs::permissions(script, fs::perms::owner_all);
  auto run = [&](const char* dir, bool every) {
    auto o = following_default(suite, tmp / dir, false);
    o.compiler.argv[0] = script.string();
    o.compile_every_default = every;
    auto r = evaluate(o);
    REQUIRE_MESSAGE(r.ok(), r.error().message);
    return std::move(r).take();
  };
  auto checked = run("checked", false), all = run("all", true);
  // The premise fails on some module: the figures must be those of compiling everything.
  REQUIRE(all.summary.ties < 5);
  CHECK(checked.defaults_shared == 0);
  CHECK(checked.defaults_checked == 0);
  REQUIRE(checked.warnings.size() == 1);
  CHECK(checked.warnings[0].find("made different objects") != std::string::npos);
  for (std::size_t i = 0; i < all.modules.size(); ++i) {
    INFO(all.modules[i].name);
    CHECK(checked.modules[i].by_default.sizes.text == all.modules[i].by_default.sizes.text);
    CHECK(checked.modules[i].learned.sizes.text == all.modules[i].learned.sizes.text);
  }
  CHECK(checked.summary.uplift == all.summary.uplift);
}

TEST_CASE("checks of shared defaults that the machine failed every one of verify nothing: every default is "
          "compiled") {
  testing::TempDir tmp;
  auto suite = testdata_suite(tmp);
  // The first three default compiles (the checks: the policy agreed
  // everywhere, so no other default was compiled before) are SIGKILLed.
  auto marks = tmp / "marks";
  fs::create_directories(marks);
  auto script = tmp / "dwcc-checks-killed.sh";
  std::ofstream(script) << "#!/bin/sh\ncase \"$*\" in *-enable-ml-inliner*) ;; *) for i in 1 2 3; do if mkdir "
                        << marks.string() << "/$i 2>/dev/null; then kill -9 $$; fi; done;; esac\nexec " << DWCC_BIN
                        << " \"$@\"\n";
  fs::permissions(script, fs::perms::owner_all);
  auto o = following_default(suite, tmp / "work", false);
  o.compiler.argv[0] = script.string();
  auto r = evaluate(o);
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  CHECK(fs::exists(marks / "3"));
  CHECK(r->defaults_shared == 0);
  CHECK(r->defaults_checked == 0);
  REQUIRE(r->warnings.size() == 1);
  CHECK(r->warnings[0].find("the machine failed every check of a shared default (3 compiles)") != std::string::npos);
  for (const auto& m : r->modules) {
    INFO(m.name);
    CHECK(m.both_ok());
    CHECK_FALSE(m.by_default.shared);
  }
}

TEST_CASE("an object of the large code model is measured by its .ltext, which is its .text") {
  testing::TempDir tmp;
  std::ofstream(tmp / "f.c") << "int g(int x) { return x * 3 + 1; }\nint f(int x) { return g(x) + g(x + 1); }\n";
  auto object = tmp / "large.o";
  common::ProcessSpec s;
  s.argv = {"clang-19", "-mcmodel=large", "-Oz", "-c", (tmp / "f.c").string(), "-o", object.string()};
  auto r = common::run_process(s).take();
  REQUIRE_MESSAGE(r.ok(), r.output);
  REQUIRE(llvm_size_text(object) == 0);  // no .text at all: 0 bytes under both heuristics, every module a tie
  auto sizes = measure_object(object).take();
  CHECK(sizes.text > 0);
  CHECK(sizes.text == sizes.code);
}

TEST_CASE("objects of Mach-O and COFF are measured by their code sections, which are not named .text") {
  testing::TempDir tmp;
  std::ofstream(tmp / "f.c") << "int g(int x) { return x * 3 + 1; }\nint f(int x) { return g(x) + g(x + 1); }\n";
  for (std::string target : {"x86_64-apple-macos11", "x86_64-pc-windows-msvc"}) {
    INFO(target);
    auto object = tmp / (target + ".o");
    common::ProcessSpec s;
    s.argv = {"clang-19", "-target", target, "-ffunction-sections", "-Oz", "-c", (tmp / "f.c").string(), "-o",
              object.string()};
    auto r = common::run_process(s).take();
    REQUIRE_MESSAGE(r.ok(), r.output);
    auto sizes = measure_object(object).take();
    CHECK(sizes.text > 0);
    CHECK(sizes.text == sizes.code);
  }
}
