#include "sweep/compat_features.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace sweep {

namespace {

std::vector<std::string> strings(const nlohmann::json& j, const char* key) {
  std::vector<std::string> out;
  if (!j.is_object() || !j.contains(key) || !j[key].is_array()) return out;
  for (const auto& e : j[key])
    if (e.is_string()) out.push_back(e.get<std::string>());
  return out;
}

}  // namespace

CompatFeatures compat_features(const std::string& compat_json) {
  auto j = nlohmann::json::parse(compat_json.empty() ? "{}" : compat_json, nullptr, false);
  CompatFeatures out;
  out.lost = strings(j, "missing");
  for (const auto& c : strings(j, "corrupted")) out.lost.push_back(c + " (unusable)");
  out.added = strings(j, "ignored");
  // Binding is by name: the order a compiler sends its features in is no change.
  for (auto* v : {&out.lost, &out.added}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  return out;
}

}  // namespace sweep
