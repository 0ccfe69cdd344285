#include "sweep/alert_matching.h"

#include <set>

namespace sweep {
namespace {

using Span = std::pair<std::size_t, std::size_t>;

std::optional<std::size_t> at(const std::map<std::string, std::size_t>& position, const std::string& sha) {
  auto it = position.find(sha);
  return it == position.end() ? std::nullopt : std::optional(it->second);
}

std::optional<Span> span_of(const FoundAt& f, const std::map<std::string, std::size_t>& position) {
  auto lo = at(position, !f.culprit.empty() ? f.culprit : !f.range_first.empty() ? f.range_first : f.first_bad);
  auto hi = at(position, f.first_bad);
  if (!lo || !hi) return std::nullopt;
  return Span{*lo, *hi};
}

/// A range alert's span; none for an alert with a culprit (it is exact) or off the history.
std::optional<Span> range_of(const db::AlertView& v, const std::map<std::string, std::size_t>& position) {
  if (!v.culprit_sha.empty() || v.range_first_sha.empty()) return std::nullopt;
  auto lo = at(position, v.range_first_sha), hi = at(position, v.first_bad_sha);
  if (!lo || !hi) return std::nullopt;
  return Span{*lo, *hi};
}

/// An alert pinned to nothing, only to where it was first seen (the policy
/// unable to run from the first check-in measured): a later sweep that
/// measured earlier check-ins pins the same change, of the same first_bad.
bool pinned_to_nothing(const db::AlertView& v) {
  return v.culprit_sha.empty() && v.range_first_sha.empty() && !v.first_bad_sha.empty();
}

bool strictly_inside(const Span& inner, const Span& outer) {
  return outer.first <= inner.first && inner.second <= outer.second && inner != outer;
}

}  // namespace

std::string alert_fingerprint(const std::string& project, const std::string& policy_hash, const std::string& suite_hash,
                              const std::string& recipe_hash, const std::string& where) {
  return project + "|" + policy_hash + "|" + suite_hash + "|" + recipe_hash + "|" + where;
}

bool alerted_in_another_series(const std::vector<db::AlertView>& alerts, const std::string& project,
                               const FoundAt& found, const std::string& where) {
  bool any_policy = found.kind == "build-broken";
  for (const auto& v : alerts) {
    bool same_policy = v.policy_hash == found.policy_hash;
    if (v.kind != found.kind || v.recipe_hash != found.recipe_hash || (!same_policy && !any_policy)) continue;
    if (same_policy && v.suite_manifest_hash == found.suite_hash) continue;  // its own series: opened or narrowed there
    if (v.fingerprint == alert_fingerprint(project, v.policy_hash, v.suite_manifest_hash, v.recipe_hash, where))
      return true;
  }
  return false;
}

bool of_series(const db::AlertView& v, const std::string& policy_hash, const std::string& suite_hash,
               const std::string& recipe_hash) {
  return v.policy_hash == policy_hash && v.suite_manifest_hash == suite_hash &&
         (v.recipe_hash.empty() || v.recipe_hash == recipe_hash);
}

std::optional<db::Id> narrowed_alert(const std::vector<db::AlertView>& open, const FoundAt& found,
                                     const std::set<std::string>& found_now,
                                     const std::map<std::string, std::size_t>& position) {
  auto span = span_of(found, position);
  if (!span) return std::nullopt;
  for (const auto& v : open)
    if (v.fingerprint == found.fingerprint) return std::nullopt;
  for (const auto& v : open) {
    if (v.kind != found.kind || !of_series(v, found.policy_hash, found.suite_hash, found.recipe_hash) ||
        found_now.count(v.fingerprint))
      continue;
    if (auto range = range_of(v, position); range && strictly_inside(*span, *range)) return v.id;
    if (pinned_to_nothing(v) && v.first_bad_sha == found.first_bad &&
        (!found.culprit.empty() || !found.range_first.empty()))
      return v.id;
  }
  return std::nullopt;
}

std::vector<db::Id> superseded_alerts(const std::vector<db::AlertView>& open, const std::string& policy_hash,
                                      const std::string& suite_hash, const std::string& recipe_hash,
                                      const std::vector<FoundAt>& found,
                                      const std::map<std::string, std::size_t>& position) {
  std::set<std::string> current;
  for (const auto& f : found) current.insert(f.fingerprint);
  std::vector<db::Id> out;
  for (const auto& v : open) {
    if (!of_series(v, policy_hash, suite_hash, recipe_hash) || current.count(v.fingerprint)) continue;
    auto range = range_of(v, position);
    if (!range) continue;
    for (const auto& f : found)
      if (auto span = span_of(f, position); span && strictly_inside(*span, *range)) {
        out.push_back(v.id);
        break;
      }
  }
  return out;
}

}  // namespace sweep
