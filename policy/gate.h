#pragma once
// A gate on the compiler's default decision: inline a call site the default
// leaves alone when its cost is low, its callee has few users and its caller
// more than one. Per-site flips found by search do not carry over to other
// packages (README, "What limits it"); a rule of three thresholds, fitted on
// whole suites, does. The gate is written as the weights of a small ReLU
// network, exact on the compiler's integer features, so it is stored, loaded
// and served as every other policy. Pure logic: no LibTorch, no I/O.
#include <optional>
#include <string>
#include <vector>

namespace policy {

inline constexpr const char* kGateCost = "cost_estimate";
inline constexpr const char* kGateCalleeUsers = "callee_users";
inline constexpr const char* kGateCallerUsers = "caller_users";

struct GateRule {
  int max_cost = 0;          ///< inline also where cost_estimate <= this
  int max_callee_users = 0;  ///< and callee_users <= this
  int min_caller_users = 0;  ///< and caller_users >= this (0: any caller)

  bool passes(double cost, double callee_users, double caller_users) const {
    return cost <= max_cost && callee_users <= max_callee_users && caller_users >= min_caller_users;
  }
  /// "cost <= 10, callee users <= 2, caller users >= 2", for people.
  std::string describe() const;
  /// "c10-u2-k2": a file name for its cached figures.
  std::string key() const;
};

/// Whether the gate opens on a module's default trajectory (rows and the
/// default's 0/1 decisions, as training collects them): at a site the
/// default leaves alone and the rule passes. Where it never does, the gate's
/// compile makes the default's decisions at every site in the same order, so
/// its size is the default echo's, known without compiling. Refuses
/// (std::invalid_argument) features that lack one of the three.
bool gate_opens_on(const GateRule& rule, const std::vector<std::string>& features,
                   const std::vector<std::vector<double>>& rows, const std::vector<int>& default_decisions);

/// The thresholds training tries: every combination of these.
struct GateGrid {
  std::vector<int> max_costs = {5, 10, 25};  ///< the compiler's costs come in steps of 5
  std::vector<int> max_callee_users = {1, 2, 3};
  std::vector<int> min_caller_users = {0, 2};
};
std::vector<GateRule> gate_candidates(const GateGrid& grid);

/// How a gate policy was fitted, from its training record (the metadata's
/// `training` JSON): retraining a gate fits a gate again, the same way.
struct GateFit {
  GateGrid grid;
  double no_worse_bar = 0.95;
  std::string chosen;  ///< the rule chosen (GateRule::describe); empty: the gate stays closed
};
/// None: the policy is not a gate.
std::optional<GateFit> gate_fit_from_training(const std::string& training_json);

/// The network's layers, row-major: F inputs → 6 → 1 → 2 logits, ReLU
/// between. Inputs are transform_feature(raw) (the policy's normalization
/// is mean 0, scale 1). Each of the three tests is a difference of two ReLUs,
/// 1 where it holds and 0 where it does not, for every integer input; the
/// second layer is 1 only when all three hold; the inline logit is then
/// 2·margin, so the default's side (±margin when served) is kept unless the
/// gate opens. `rule` null: a gate that never opens.
struct GateWeights {
  std::vector<float> w1, b1, w2, b2, w3, b3;
};
inline constexpr int kGateHidden1 = 6, kGateHidden2 = 1;
/// Refuses (std::invalid_argument) features that lack one of the three.
GateWeights gate_weights(const GateRule* rule, const std::vector<std::string>& features, double margin);

/// The network's score (inline logit minus the other) on transformed inputs,
/// in plain arithmetic: what the LibTorch network computes, for tests.
double gate_score(const GateWeights& w, const std::vector<float>& inputs);

}  // namespace policy
