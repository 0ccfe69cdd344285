// A gate rule written as a network: exact on integer features, served as
// any policy with a margin.
#include <doctest/doctest.h>

#include <stdexcept>
#include <tuple>

#include "policy/gate.h"
#include "policy/gate_policy.h"
#include "tests/support/temp_dir.h"

using namespace policy;

namespace {

const std::vector<std::string> kFeatures = {"sroa_savings", "caller_users", "callee_users", "cost_estimate",
                                            "nr_ctant_params"};

std::vector<float> inputs(double cost, double callee, double caller) {
  return {static_cast<float>(transform_feature(7)), static_cast<float>(transform_feature(caller)),
          static_cast<float>(transform_feature(callee)), static_cast<float>(transform_feature(cost)),
          static_cast<float>(transform_feature(3))};
}

PolicyMetadata metadata() {
  PolicyMetadata m;
  m.name = "gate";
  m.features = kFeatures;
  m.created = "2026-12-03T00:00:00Z";
  return m;
}

/// What the runner decides: the score plus the default's side at the margin.
bool inlines(double score, bool default_inlines, double margin) {
  return score + (default_inlines ? margin : -margin) > 0;
}

}  // namespace

TEST_CASE("a gate's network opens exactly where its three thresholds hold, for every integer input") {
  const std::vector<double> costs = {-100000, -45, -5, -1, 0, 1, 4, 5, 6, 9, 10, 11, 24, 25, 26, 30, 45, 1000, 250000};
  for (GateRule rule : {GateRule{10, 2, 2}, GateRule{5, 1, 0}, GateRule{25, 3, 3}, GateRule{-5, 0, 1}}) {
    CAPTURE(rule.describe());
    auto w = gate_weights(&rule, kFeatures, 1.0);
    auto model = gate_policy(&rule, metadata());
    int opened = 0, checked = 0;
    for (double cost : costs)
      for (double callee : {0., 1., 2., 3., 4., 9., 100., 70000.})
        for (double caller : {0., 1., 2., 3., 4., 17., 90000.}) {
          CAPTURE(cost);
          CAPTURE(callee);
          CAPTURE(caller);
          bool open = rule.passes(cost, callee, caller);
          auto x = inputs(cost, callee, caller);
          double pure = gate_score(w, x), served = model.score(x.data());
          CHECK(pure == doctest::Approx(open ? 2.0 : 0.0).epsilon(1e-4));
          CHECK(served == doctest::Approx(pure).epsilon(1e-4));
          // Where the default inlines, it still does; where it does not, only an open gate inlines.
          CHECK(inlines(served, true, model.metadata().margin));
          CHECK(inlines(served, false, model.metadata().margin) == open);
          opened += open, ++checked;
        }
    CHECK(opened > 0);
    CHECK(opened < checked);
  }
}

TEST_CASE("a gate at the largest thresholds train accepts still decides exactly at them") {
  // Float rounding grows with the threshold (the ramp narrows as the
  // transform flattens): the step keeps its slack at train's limit of 1000.
  for (GateRule rule : {GateRule{1000, 1000, 1000}, GateRule{-1000, 999, 1}}) {
    CAPTURE(rule.describe());
    auto model = gate_policy(&rule, metadata());
    for (double d : {-2., -1., 0., 1., 2.}) {
      double cost = rule.max_cost + d, callee = rule.max_callee_users + d, caller = rule.min_caller_users + d;
      for (auto [c, u, k] : {std::tuple{cost, 0., 1000.}, std::tuple{-1000., callee, 1000.},
                             std::tuple{-1000., 0., caller}}) {
        auto x = inputs(c, u, k);
        double score = model.score(x.data());
        bool open = rule.passes(c, u, k);
        CHECK(inlines(score, false, model.metadata().margin) == open);
        if (!open) CHECK(score == 0.0);  // exactly: a closed test's units are both off
        if (open) CHECK(score == doctest::Approx(2.0).epsilon(0.05));
      }
    }
  }
}

TEST_CASE("a closed gate keeps the default's decision everywhere") {
  auto model = gate_policy(nullptr, metadata());
  for (double cost : {-50., 0., 5., 10.})
    for (double users : {0., 1., 2., 5.}) {
      auto x = inputs(cost, users, users);
      CHECK(inlines(model.score(x.data()), true, model.metadata().margin));
      CHECK_FALSE(inlines(model.score(x.data()), false, model.metadata().margin));
    }
}

TEST_CASE("a gate policy is saved and loaded as any policy, and scores the same") {
  testing::TempDir dir;
  GateRule rule{10, 2, 2};
  auto model = gate_policy(&rule, metadata());
  auto file = dir.path() / "gate.policy";
  REQUIRE(model.save(file).ok());
  auto loaded = PolicyModel::load(file).take();
  CHECK(loaded.metadata().margin == 1);
  CHECK(loaded.metadata().hidden == std::vector<int>{kGateHidden1, kGateHidden2});
  for (double cost : {5., 10., 11.}) {
    auto x = inputs(cost, 2, 2);
    CHECK(loaded.score(x.data()) == model.score(x.data()));
  }
}

TEST_CASE("a gate needs the cost, the callee's users and the caller's users") {
  GateRule rule{10, 2, 2};
  const std::vector<std::string> all = {"sroa_savings", kGateCallerUsers, kGateCalleeUsers, kGateCost};
  CHECK_NOTHROW(gate_weights(&rule, all, 1.0));
  for (const char* missing : {kGateCost, kGateCalleeUsers, kGateCallerUsers}) {
    INFO(missing);
    std::vector<std::string> without;
    for (const auto& f : all)
      if (f != missing) without.push_back(f);
    CHECK_THROWS_AS(gate_weights(&rule, without, 1.0), std::invalid_argument);
  }
}

TEST_CASE("a gate's grid is every combination of its thresholds") {
  GateGrid grid{{5, 10}, {1, 2, 3}, {0, 2}};
  auto all = gate_candidates(grid);
  CHECK(all.size() == 12);
  CHECK(all.front().key() == "c5-u1-k0");
  CHECK(all.back().key() == "c10-u3-k2");
  CHECK(GateRule{10, 2, 0}.describe() == "cost <= 10, callee users <= 2");
  CHECK(GateRule{10, 2, 2}.describe() == "cost <= 10, callee users <= 2, caller users >= 2");
}

TEST_CASE("a gate policy's training record gives back the grid and bar it was fitted with, and another policy's none") {
  auto fit = gate_fit_from_training(
      R"({"gate": "cost <= 10, callee users <= 2", "no_worse_bar": 0.9, "gate_grid": [)"
      R"({"max_cost": 5, "max_callee_users": 2, "min_caller_users": 0},)"
      R"({"max_cost": 5, "max_callee_users": 2, "min_caller_users": 2},)"
      R"({"max_cost": 10, "max_callee_users": 2, "min_caller_users": 0},)"
      R"({"max_cost": 10, "max_callee_users": 2, "min_caller_users": 2}]})");
  REQUIRE(fit);
  CHECK(fit->grid.max_costs == std::vector<int>{5, 10});
  CHECK(fit->grid.max_callee_users == std::vector<int>{2});
  CHECK(fit->grid.min_caller_users == std::vector<int>{0, 2});
  CHECK(fit->no_worse_bar == 0.9);
  CHECK(fit->chosen == "cost <= 10, callee users <= 2");
  CHECK_FALSE(gate_fit_from_training(R"({"method": "imitation", "margin": 6})"));
  CHECK_FALSE(gate_fit_from_training(""));
  CHECK_FALSE(gate_fit_from_training("not json"));
  CHECK_FALSE(gate_fit_from_training(R"({"gate_grid": [{"max_cost": "ten"}]})"));
}

TEST_CASE("a gate opens on a trajectory only at a site the default leaves alone and the rule passes") {
  GateRule rule{10, 2, 2};
  // Rows in kFeatures order: sroa_savings, caller_users, callee_users, cost_estimate, nr_ctant_params.
  std::vector<std::vector<double>> rows = {{0, 3, 1, 5, 0},    // passes, but the default inlines it already
                                           {0, 1, 1, 5, 0},    // one caller user: fails
                                           {0, 3, 3, 5, 0},    // three callee users: fails
                                           {0, 3, 1, 15, 0}};  // cost 15: fails
  CHECK_FALSE(gate_opens_on(rule, kFeatures, rows, {1, 0, 0, 0}));
  CHECK(gate_opens_on(rule, kFeatures, rows, {0, 0, 0, 0}));  // the first site flips
  rows.push_back({0, 2, 2, 10, 0});                          // every test at its threshold
  CHECK(gate_opens_on(rule, kFeatures, rows, {1, 0, 0, 0, 0}));
  // Rows and decisions that do not pair up are no trajectory: the module is compiled.
  CHECK(gate_opens_on(rule, kFeatures, rows, {1, 0, 0, 0}));
  CHECK_FALSE(gate_opens_on(rule, kFeatures, {}, {}));
  CHECK_THROWS_AS(gate_opens_on(rule, {"sroa_savings"}, rows, {1, 0, 0, 0, 0}), std::invalid_argument);
}
