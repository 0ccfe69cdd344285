#include "policy/feature_binding.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace policy {

namespace {
std::string list(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}
}  // namespace

std::string CompatReport::to_json() const {
  if (!known) return nlohmann::json{{"state", "unknown"}}.dump();
  return nlohmann::json{{"state", "known"},   {"bound", bound},         {"missing", missing},
                        {"ignored", ignored}, {"corrupted", corrupted}, {"distrusted", distrusted}}
      .dump();
}

std::string CompatReport::summary() const {
  if (!known) return "unknown (no learned compile reported the compiler's features)";
  std::vector<std::string> parts;
  if (!missing.empty())
    parts.push_back(std::to_string(missing.size()) + " missing, filled with the training mean (" + list(missing) + ")");
  if (!corrupted.empty())
    parts.push_back(std::to_string(corrupted.size()) + " corrupted, filled with the training mean (" + list(corrupted) + ")");
  std::vector<std::string> new_ones;
  for (const auto& n : ignored)
    if (std::find(distrusted.begin(), distrusted.end(), n) == distrusted.end()) new_ones.push_back(n);
  if (!new_ones.empty()) parts.push_back(std::to_string(new_ones.size()) + " new, ignored (" + list(new_ones) + ")");
  if (parts.empty()) parts.push_back("all features bound");
  if (!distrusted.empty())
    parts.push_back(list(distrusted) + " sent but not read (it holds the compiler's default decision, LLVM 19)");
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

CompatReport merge(const CompatReport& a, const CompatReport& b) {
  if (!a.known) return b;
  if (!b.known) return a;
  auto has = [](const std::vector<std::string>& v, const std::string& n) {
    return std::find(v.begin(), v.end(), n) != v.end();
  };
  auto unite = [&](std::vector<std::string> x, const std::vector<std::string>& y) {
    for (const auto& n : y)
      if (!has(x, n)) x.push_back(n);
    return x;
  };
  CompatReport m;
  m.known = true;
  m.missing = unite(a.missing, b.missing);
  m.ignored = unite(a.ignored, b.ignored);
  m.distrusted = unite(a.distrusted, b.distrusted);
  for (const auto& n : unite(a.corrupted, b.corrupted))
    if (!has(m.missing, n)) m.corrupted.push_back(n);
  // Each report covers all the policy's features: bound + missing + corrupted.
  int features = std::max(a.bound + static_cast<int>(a.missing.size() + a.corrupted.size()),
                          b.bound + static_cast<int>(b.missing.size() + b.corrupted.size()));
  m.bound = features - static_cast<int>(m.missing.size() + m.corrupted.size());
  return m;
}

FeatureBinding bind_features(const std::vector<std::string>& policy_features, const ChannelHeader& header,
                             const std::vector<std::string>& unusable) {
  FeatureBinding b;
  b.report.known = true;
  auto is_unusable = [&](const std::string& n) {
    return std::find(unusable.begin(), unusable.end(), n) != unusable.end();
  };
  for (const auto& name : policy_features) {
    int idx = header.find(name);
    // A policy feature is one number: a compiler that now sends a vector
    // under the same name (reshaped) must not have its first element read.
    bool reshaped = idx >= 0 && header.features[idx].element_count() != 1;
    if (idx >= 0 && (is_unusable(name) || reshaped)) {
      b.report.corrupted.push_back(name);
      idx = -1;
    } else if (idx < 0) {
      b.report.missing.push_back(name);
    } else {
      ++b.report.bound;
    }
    b.source.push_back(idx);
  }
  for (const auto& f : header.features) {
    bool known = std::find(policy_features.begin(), policy_features.end(), f.name) != policy_features.end();
    // The default decision is the compiler's answer, never an input to a policy.
    if (known || f.name == "inlining_default") continue;
    // Stored evaluations list it as ignored (drift compares those lists
    // across check-ins); people are told what it holds instead.
    b.report.ignored.push_back(f.name);
    if (is_unusable(f.name)) b.report.distrusted.push_back(f.name);
  }
  return b;
}

}  // namespace policy
