// Real evaluations with the sample compiler: sizes checked against
// llvm-size-19, failures recorded while the rest goes on, policies that
// cannot run refused with their compatibility report.
#include <doctest/doctest.h>

#include <fstream>

#include "common/process.h"
#include "common/text.h"
#include "evaluator/evaluation.h"
#include "evaluator/suite_builder.h"
#include "policy/runner.h"
#include "tests/support/temp_dir.h"

using namespace evaluator;
namespace fs = std::filesystem;

namespace {

/// The five C test inputs of samples/testdata as a suite, plus link group
/// "all" (a shared library of all of them).
SuiteBuildReport testdata_suite(const testing::TempDir& tmp) {
  std::string dir = std::string(DRIFTWATCH_SOURCE_DIR) + "/samples/testdata";
  std::string json = "[";
  for (const char* f : {"hashtable", "ini", "json", "sort", "utf8"})
    json += std::string(json.size() > 1 ? "," : "") + "{\"directory\": \"" + dir + "\", \"file\": \"" + f +
            ".c\", \"command\": \"cc -Oz -fPIC -c " + f + ".c\"}";
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

TEST_CASE("a hung compile is recorded as a timeout and the rest goes on") {
  testing::TempDir tmp;
  auto suite = testdata_suite(tmp);
  auto o = options(suite, tmp / "work", 0);
  // A "compiler" that hangs on one module only.
  std::ofstream(tmp / "cc.sh") << "#!/bin/sh\ncase \"$1\" in *sort*) sleep 60;; esac\nexec " << DWCC_BIN << " \"$@\"\n";
  fs::permissions(tmp / "cc.sh", fs::perms::owner_all);
  o.compiler.argv[0] = (tmp / "cc.sh").string();
  o.compiler.timeout = std::chrono::seconds(3);
  auto r = evaluate(o);
  REQUIRE(r.ok());
  CHECK(r->failed == 1);
  for (const auto& m : r->modules)
    if (m.name == "sort.c") CHECK(m.by_default.outcome == kOutcomeTimeout);
}
