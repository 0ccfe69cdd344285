#include "policy/gate.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <stdexcept>

#include "policy/model.h"

namespace policy {

std::string GateRule::describe() const {
  std::string s = "cost <= " + std::to_string(max_cost) + ", callee users <= " + std::to_string(max_callee_users);
  if (min_caller_users > 0) s += ", caller users >= " + std::to_string(min_caller_users);
  return s;
}

std::string GateRule::key() const {
  return "c" + std::to_string(max_cost) + "-u" + std::to_string(max_callee_users) + "-k" +
         std::to_string(min_caller_users);
}

std::vector<GateRule> gate_candidates(const GateGrid& grid) {
  std::vector<GateRule> out;
  for (int c : grid.max_costs)
    for (int u : grid.max_callee_users)
      for (int k : grid.min_caller_users) out.push_back({c, u, k});
  return out;
}

std::optional<GateFit> gate_fit_from_training(const std::string& training_json) {
  auto t = nlohmann::json::parse(training_json.empty() ? "{}" : training_json, nullptr, false);
  if (!t.is_object() || !t.contains("gate_grid") || !t["gate_grid"].is_array()) return std::nullopt;
  GateGrid grid{{}, {}, {}};
  auto add = [](std::vector<int>& to, const nlohmann::json& v) {
    if (v.is_number_integer() && std::find(to.begin(), to.end(), v.get<int>()) == to.end()) to.push_back(v.get<int>());
  };
  for (const auto& row : t["gate_grid"]) {
    if (!row.is_object()) return std::nullopt;
    add(grid.max_costs, row.value("max_cost", nlohmann::json()));
    add(grid.max_callee_users, row.value("max_callee_users", nlohmann::json()));
    add(grid.min_caller_users, row.value("min_caller_users", nlohmann::json()));
  }
  if (grid.max_costs.empty() || grid.max_callee_users.empty() || grid.min_caller_users.empty()) return std::nullopt;
  GateFit fit{grid};
  auto bar = t.value("no_worse_bar", nlohmann::json());
  if (bar.is_number() && bar.get<double>() >= 0 && bar.get<double>() <= 1) fit.no_worse_bar = bar.get<double>();
  if (auto chosen = t.value("gate", nlohmann::json()); chosen.is_string()) fit.chosen = chosen.get<std::string>();
  return fit;
}

namespace {

/// A test's two first-layer units, A = relu(w·x + b + 1) and B = relu(w·x + b),
/// whose difference is 1 where the test holds and 0 where it does not, for
/// every integer input: the ramp lies in the middle half of the gap between
/// the transformed values of the two integers on either side of the
/// threshold, so float rounding at those integers stays off it (A's input is
/// at most -1 on the side where the test fails: exactly 0 there).
struct Step {
  float weight = 0, bias = 1;  ///< of A; B's bias is one less
};

/// holds when x <= t (upper) or x >= t (lower), for integer x.
Step step(int t, bool upper) {
  double lo = transform_feature(upper ? t : t - 1), hi = transform_feature(upper ? t + 1 : t);
  double mid = (lo + hi) / 2, k = 4 / (hi - lo);
  // upper: a = k·(mid - x); lower: a = k·(x - mid). 1 + a: A's pre-activation.
  return upper ? Step{static_cast<float>(-k), static_cast<float>(k * mid + 1)}
               : Step{static_cast<float>(k), static_cast<float>(-k * mid + 1)};
}

int index_of(const std::vector<std::string>& features, const char* name) {
  auto it = std::find(features.begin(), features.end(), name);
  if (it == features.end()) throw std::invalid_argument(std::string("the compiler sends no ") + name);
  return static_cast<int>(it - features.begin());
}

float relu(float x) { return x > 0 ? x : 0; }

}  // namespace

bool gate_opens_on(const GateRule& rule, const std::vector<std::string>& features,
                   const std::vector<std::vector<double>>& rows, const std::vector<int>& default_decisions) {
  int cost = index_of(features, kGateCost), callee = index_of(features, kGateCalleeUsers),
      caller = index_of(features, kGateCallerUsers);
  if (rows.size() != default_decisions.size()) return true;  // not a trajectory: compile to know
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (default_decisions[i] == 0 && rule.passes(rows[i].at(cost), rows[i].at(callee), rows[i].at(caller)))
      return true;
  return false;
}

GateWeights gate_weights(const GateRule* rule, const std::vector<std::string>& features, double margin) {
  const int n = static_cast<int>(features.size());
  GateWeights w;
  w.w1.assign(kGateHidden1 * n, 0.0f);
  w.b1.assign(kGateHidden1, 0.0f);
  int inputs[3] = {index_of(features, kGateCost), index_of(features, kGateCalleeUsers),
                   index_of(features, kGateCallerUsers)};
  Step steps[3];  // a null rule keeps the defaults (always holds) and closes the last layer
  if (rule) {
    steps[0] = step(rule->max_cost, true);
    steps[1] = step(rule->max_callee_users, true);
    if (rule->min_caller_users > 0) steps[2] = step(rule->min_caller_users, false);
  }
  for (int t = 0; t < 3; ++t) {
    for (int unit : {2 * t, 2 * t + 1}) w.w1[unit * n + inputs[t]] = steps[t].weight;
    w.b1[2 * t] = steps[t].bias;
    w.b1[2 * t + 1] = steps[t].bias - 1;
  }
  w.w2 = {1, -1, 1, -1, 1, -1};
  w.b2 = {-2};
  w.w3 = {0, rule ? static_cast<float>(2 * margin) : 0.0f};
  w.b3 = {0, 0};
  return w;
}

double gate_score(const GateWeights& w, const std::vector<float>& x) {
  const int n = static_cast<int>(x.size());
  float h1[kGateHidden1];
  for (int u = 0; u < kGateHidden1; ++u) {
    float a = w.b1[u];
    for (int i = 0; i < n; ++i) a += w.w1[u * n + i] * x[i];
    h1[u] = relu(a);
  }
  float h2 = w.b2[0];
  for (int u = 0; u < kGateHidden1; ++u) h2 += w.w2[u] * h1[u];
  h2 = relu(h2);
  return static_cast<double>(w.w3[1] * h2 + w.b3[1]) - (w.w3[0] * h2 + w.b3[0]);
}

}  // namespace policy
