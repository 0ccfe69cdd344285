#include "reports/report_data.h"

#include <fmt/core.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <iterator>

#include "common/text.h"

namespace reports {

std::size_t SuiteSeries::evaluated() const {
  std::size_t n = 0;
  for (const auto& p : points) n += p.evaluated ? 1 : 0;
  return n;
}

bool ReportData::empty() const {
  for (const auto& s : suites)
    if (!s.points.empty()) return false;
  // A sweep ran though nothing finished: that is no report of nothing swept.
  return alerts.empty() && not_measured.empty();
}

std::string ReportData::name_of(const std::string& sha) const {
  auto it = toolchain_labels.find(sha);
  return it == toolchain_labels.end() ? sha.substr(0, 12) : "toolchain " + it->second;
}

std::size_t ReportData::open_alerts() const {
  std::size_t n = 0;
  for (const auto& a : alerts) n += (a.state == "open" || a.state == "acknowledged") ? 1 : 0;
  return n;
}

std::size_t ReportData::acknowledged_alerts() const {
  std::size_t n = 0;
  for (const auto& a : alerts) n += a.state == "acknowledged" ? 1 : 0;
  return n;
}

std::string SuiteOverview::partial_text() const {
  return latest_measured < modules ? fmt::format(" over {} of {} modules", latest_measured, modules) : std::string();
}

std::string SuiteOverview::change_text() const {
  // Shown to two decimals of a point: a difference that rounds away is none.
  bool other_modules = std::abs(100 * ((latest_uplift - baseline_uplift) - change)) >= 0.005;
  // In points of uplift, the percentage's number ("+1.23%" is "+1.23 points").
  auto points = common::signed_percent(change);
  points.pop_back();
  return points + " points" + (other_modules ? " over the modules both measured" : "");
}

std::string SuiteOverview::unmeasured_text() const {
  if (!unusable_since.sha.empty()) return "the policy cannot run here since " + unusable_since.sha.substr(0, 12);
  if (not_measured_after > 0)
    return "no evaluation finished (" + std::to_string(not_measured_after) +
           " sampled check-in(s): see \"Not measured\")";
  if (tried > 0) return "no check-in built (" + std::to_string(tried) + " tried)";
  return "not measured yet";
}

std::string ReportData::open_alerts_text() const {
  auto ack = acknowledged_alerts();
  return std::to_string(open_alerts()) + " of " + std::to_string(alerts.size()) +
         (ack ? " (" + std::to_string(ack) + " acknowledged)" : "");
}

std::string commit_link(const std::string& url_template, const std::string& sha) {
  if (url_template.empty() || sha.empty()) return {};
  auto out = url_template;
  for (auto at = out.find("{sha}"); at != std::string::npos; at = out.find("{sha}", at + sha.size()))
    out.replace(at, 5, sha);
  return out;
}

std::optional<int> baseline_position(const std::vector<int>& evaluated, std::optional<int> trained_position) {
  auto at = std::lower_bound(evaluated.begin(), evaluated.end(), trained_position.value_or(INT_MIN));
  if (at == evaluated.end()) return std::nullopt;
  return *at;
}

std::optional<std::size_t> baseline_index(const SuiteSeries& series, std::optional<int> trained_position) {
  std::vector<int> evaluated;
  for (const auto& p : series.points)
    if (p.evaluated) evaluated.push_back(p.position);
  std::sort(evaluated.begin(), evaluated.end());
  auto base = baseline_position(evaluated, trained_position);
  if (!base) return std::nullopt;
  for (std::size_t i = 0; i < series.points.size(); ++i)
    if (series.points[i].evaluated && series.points[i].position == *base) return i;
  return std::nullopt;
}

namespace {

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

/// In `a`, not in `b` (both sorted).
std::vector<std::string> minus(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<std::string> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

}  // namespace

std::vector<FeatureSetChangeEntry> feature_set_changes(const std::string& suite, std::vector<FeatureSets> sets) {
  std::vector<FeatureSetChangeEntry> out;
  for (std::size_t i = 0; i < sets.size(); ++i) {
    auto missing = sorted(std::move(sets[i].missing)), added = sorted(std::move(sets[i].added));
    if (i > 0) {
      const auto& was_missing = sets[i - 1].missing;
      const auto& was_added = sets[i - 1].added;
      if (missing != was_missing || added != was_added)
        out.push_back({suite, sets[i].at, missing, added, minus(missing, was_missing), minus(was_missing, missing),
                       minus(added, was_added), minus(was_added, added)});
    }
    sets[i].missing = std::move(missing), sets[i].added = std::move(added);
  }
  return out;
}

}  // namespace reports
