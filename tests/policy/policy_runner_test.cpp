// The LibTorch runner answering a real compiler (dwcc) over the ML channel.
#include "policy/policy_runner.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <limits>

#include "common/process.h"
#include "evaluator/object_size.h"
#include "policy/compiler.h"
#include "policy/gate.h"
#include "policy/gate_policy.h"
#include "policy/model.h"
#include "tests/support/temp_dir.h"

using namespace policy;
namespace fs = std::filesystem;

namespace {

fs::path bitcode(const testing::TempDir& dir, const std::string& name) {
  auto bc = dir / (name + ".bc");
  common::ProcessSpec clang;
  clang.argv = {"clang-19", "-Oz", "-Xclang", "-disable-llvm-passes", "-emit-llvm", "-c",
                std::string(DRIFTWATCH_SOURCE_DIR) + "/samples/testdata/" + name + ".c", "-o", bc.string()};
  REQUIRE(common::run_process(clang).take().ok());
  return bc;
}

CompilerInvocation dwcc() {
  CompilerInvocation cc;
  cc.argv = {DWCC_BIN, "{input}", "-o", "{output}", "-Oz"};
  return cc;
}

/// A network that says "inline" to everything: a large positive bias on the inline logit.
PolicyModel eager_model(const std::vector<std::string>& features) {
  PolicyMetadata m;
  m.name = "eager";
  m.features = features;
  m.mean.assign(features.size(), 0);
  m.scale.assign(features.size(), 1);
  m.hidden = {4};
  return PolicyModel::create(m);
}

}  // namespace

TEST_CASE("the LibTorch runner binds the compiler's features and changes its decisions") {
  testing::TempDir dir;
  auto bc = bitcode(dir, "json");
  // Learn the compiler's feature names from one logged compile.
  DecisionLog log;
  auto logger = make_logging_runner(make_constant_runner(0), log);
  REQUIRE(compile_with_runner(dwcc(), bc, dir / "probe.o", *logger, dir.path()).ok);

  // Two policies with different random weights answer differently.
  std::vector<std::size_t> inlined;
  std::vector<std::int64_t> sizes;
  for (std::uint64_t seed : {1, 2, 3, 4}) {
    auto meta = eager_model(log.feature_names).metadata();
    meta.seed = seed;
    auto model = PolicyModel::create(meta);
    CompatReport report;
    TrainingTrace trace;
    PolicyRunnerOptions opts;
    opts.trace = &trace;
    auto runner = make_policy_runner(model, &report, opts);
    auto obj = dir / ("p" + std::to_string(seed) + ".o");
    auto r = compile_with_runner(dwcc(), bc, obj, *runner, dir.path());
    REQUIRE_MESSAGE(r.ok, r.error);
    CHECK(report.compatible());
    CHECK(report.bound == static_cast<int>(log.feature_names.size()));
    std::size_t ones = 0;
    for (int a : trace.actions) ones += a;
    inlined.push_back(ones);
    sizes.push_back(evaluator::measure_object(obj).take().text);
  }
  auto plain = compile_default(dwcc(), bc, dir / "default.o");
  REQUIRE(plain.ok);
  auto default_size = evaluator::measure_object(dir / "default.o").take().text;
  // Not every random network agrees with the others or with the default heuristic.
  bool differs = false;
  for (std::size_t i = 0; i < sizes.size(); ++i) differs = differs || sizes[i] != default_size;
  CHECK(differs);
  CHECK(*std::max_element(inlined.begin(), inlined.end()) != *std::min_element(inlined.begin(), inlined.end()));
}

TEST_CASE("a policy for another feature set is refused with the names listed") {
  testing::TempDir dir;
  auto bc = bitcode(dir, "ini");
  auto model = eager_model({"mask", "is_hint", "progress", "weighed_read_writes_by_max"});
  CompatReport report;
  auto runner = make_policy_runner(model, &report);
  auto r = compile_with_runner(dwcc(), bc, dir / "x.o", *runner, dir.path());
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("was trained on another feature set") != std::string::npos);
  CHECK(r.error.find("is_hint") != std::string::npos);
  CHECK_FALSE(report.usable());
  CHECK(report.missing.size() == 4);
}

TEST_CASE("advice of more than one element is refused: the policy gives one decision") {
  auto model = eager_model({"sroa_savings"});
  auto runner = make_policy_runner(model);
  ChannelHeader h;
  h.features.push_back({"sroa_savings", "int64_t", {1}, 0});
  h.advice = {"inlining_decision", "int64_t", {2}, 0};
  auto refused = runner->begin(h);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("advice 'inlining_decision' of 2 elements") != std::string::npos);
  h.advice.shape = {1};
  CHECK(runner->begin(h).ok());
}

TEST_CASE("a policy with a margin keeps the default's decisions unless its score passes them by the margin") {
  testing::TempDir dir;
  auto bc = bitcode(dir, "json");
  DecisionLog log;
  auto logger = make_logging_runner(make_constant_runner(0), log);
  REQUIRE(compile_with_runner(dwcc(), bc, dir / "probe.o", *logger, dir.path()).ok);
  auto slot = detect_default_slot(dwcc(), dir / "slot");
  REQUIRE_MESSAGE(slot.ok(), slot.error().message);
  std::vector<std::string> features;
  for (const auto& f : log.feature_names)
    if (f != "callee_basic_block_count") features.push_back(f);

  // The compiler's own decisions, answered over the channel.
  DecisionLog echoed;
  auto echo = make_logging_runner(make_echo_runner(*slot), echoed);
  REQUIRE(compile_with_runner(dwcc(), bc, dir / "echo.o", *echo, dir.path(), true).ok);
  auto echo_size = evaluator::measure_object(dir / "echo.o").take().text;

  auto run = [&](double margin, std::uint64_t seed, std::vector<double>* decisions) {
    auto meta = eager_model(features).metadata();
    meta.seed = seed;
    meta.margin = margin;
    auto model = PolicyModel::create(meta);
    PolicyRunnerOptions opts;
    opts.default_slot = *slot;
    DecisionLog seen;
    auto runner = make_logging_runner(make_policy_runner(model, nullptr, opts), seen);
    auto obj = dir / ("m" + std::to_string(seed) + ".o");
    // The runner asks for the default decision itself: no include_default here.
    auto r = compile_with_runner(dwcc(), bc, obj, *runner, dir.path());
    REQUIRE_MESSAGE(r.ok, r.error);
    if (decisions) *decisions = seen.decisions;
    return evaluator::measure_object(obj).take().text;
  };
  // A margin no score passes: exactly the default's decisions and object.
  std::vector<double> deferred;
  CHECK(run(1e6, 1, &deferred) == echo_size);
  CHECK(deferred == echoed.decisions);
  // No margin: random networks depart from the default somewhere.
  bool departs = false;
  for (std::uint64_t seed : {1, 2, 3, 4}) {
    std::vector<double> own;
    run(0, seed, &own);
    departs = departs || own != echoed.decisions;
  }
  CHECK(departs);

  // Without the slot, a policy with a margin refuses to guess.
  auto meta = eager_model(features).metadata();
  meta.margin = 1;
  auto model = PolicyModel::create(meta);
  auto runner = make_policy_runner(model);
  auto r = compile_with_runner(dwcc(), bc, dir / "x.o", *runner, dir.path());
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("where this compiler puts it is unknown") != std::string::npos);
}

TEST_CASE("a gate whose tested feature the compiler no longer sends is refused, not served as another rule") {
  PolicyMetadata meta;
  meta.name = "gate";
  meta.features = {kGateCost, kGateCalleeUsers, kGateCallerUsers, "sroa_savings"};
  meta.training = R"({"gate_grid": [{"max_cost": 10, "max_callee_users": 2, "min_caller_users": 0}],
                      "gate": "cost <= 10, callee users <= 2"})";
  GateRule rule{10, 2, 0};
  auto model = gate_policy(&rule, meta);
  // caller_users >= 0 holds everywhere: the rule does not read it.
  CHECK(model.features_read() == std::vector<bool>{true, true, false, false});
  PolicyRunnerOptions options;
  options.default_slot = DefaultDecisionSlot::InliningDefault;
  auto header = [](std::vector<std::string> names) {
    ChannelHeader h;
    for (const auto& n : names) h.features.push_back({n, "int64_t", {1}, 0});
    h.features.push_back({"inlining_default", "int64_t", {1}, 0});
    h.advice = {"inlining_decision", "int64_t", {1}, 0};
    return h;
  };
  auto runner = make_policy_runner(model, nullptr, options);
  CHECK(runner->begin(header({kGateCost, kGateCalleeUsers, kGateCallerUsers, "sroa_savings"})).ok());
  // Three of four features bound: usable for a network, which fills the
  // fourth with its training mean; a gate has none for what it tests.
  auto refused = runner->begin(header({kGateCost, kGateCallerUsers, "sroa_savings"}));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message == "policy gate is a gate on callee_users, which the compiler does not send: it "
                                   "cannot run here");
  // What the rule does not read may go.
  CHECK(runner->begin(header({kGateCost, kGateCalleeUsers, "sroa_savings"})).ok());
}

TEST_CASE("a score the model cannot compute (an infinite feature) keeps the default's decision") {
  PolicyMetadata meta;
  meta.name = "gate";
  meta.features = {kGateCost, kGateCalleeUsers, kGateCallerUsers, "sroa_savings"};
  GateRule rule{10, 2, 0};
  auto model = gate_policy(&rule, meta);
  PolicyRunnerOptions options;
  options.default_slot = DefaultDecisionSlot::InliningDefault;
  ChannelHeader h;
  for (const auto& n : meta.features) h.features.push_back({n, "float", {1}, 0});
  h.features.push_back({"inlining_default", "int64_t", {1}, 0});
  h.advice = {"inlining_decision", "int64_t", {1}, 0};
  auto runner = make_policy_runner(model, nullptr, options);
  REQUIRE(runner->begin(h).ok());
  const std::string context = "m";
  auto inf = std::numeric_limits<double>::infinity();
  for (double by_default : {0.0, 1.0}) {
    // A site the gate leaves closed (cost 50), but a feature it weighs at 0 is infinite: 0 * inf.
    std::vector<std::vector<double>> features = {{50}, {5}, {1}, {inf}, {by_default}};
    CHECK(runner->advise({h, features, 0, context}) == by_default);
  }
}
