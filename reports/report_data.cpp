#include "reports/report_data.h"

#include <algorithm>
#include <climits>

namespace reports {

std::size_t SuiteSeries::evaluated() const {
  std::size_t n = 0;
  for (const auto& p : points) n += p.evaluated ? 1 : 0;
  return n;
}

bool ReportData::empty() const {
  for (const auto& s : suites)
    if (!s.points.empty()) return false;
  return alerts.empty();
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

std::string SuiteOverview::unmeasured_text() const {
  if (!unusable_since.sha.empty()) return "the policy cannot run here since " + unusable_since.sha.substr(0, 12);
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

}  // namespace reports
