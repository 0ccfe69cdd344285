#include "evaluator/uplift.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace evaluator {

double ModuleSizes::ratio() const {
  if (default_bytes > 0) return static_cast<double>(learned_bytes) / static_cast<double>(default_bytes);
  return learned_bytes == 0 ? 1.0 : std::numeric_limits<double>::infinity();
}

UpliftSummary summarize(const std::vector<ModuleSizes>& modules, int worst_count) {
  UpliftSummary s;
  double log_sum = 0;
  int in_geomean = 0;
  for (const auto& m : modules) {
    ++s.modules;
    if (m.in_geomean()) {
      log_sum += std::log(m.ratio());
      ++in_geomean;
    } else {
      ++s.zero_size;
    }
    s.total_default += m.default_bytes;
    s.total_learned += m.learned_bytes;
    if (m.learned_bytes < m.default_bytes) ++s.wins;
    else if (m.learned_bytes == m.default_bytes) ++s.ties;
    else ++s.losses;
  }
  if (s.modules == 0) return s;
  if (in_geomean > 0) s.geomean_ratio = std::exp(log_sum / in_geomean);
  s.uplift = 1 - s.geomean_ratio;
  s.total_uplift = s.total_default > 0 ? 1 - static_cast<double>(s.total_learned) / s.total_default : 0;
  s.no_worse_share = static_cast<double>(s.wins + s.ties) / s.modules;
  for (const auto& m : modules)
    if (m.learned_bytes > m.default_bytes) s.worst.push_back(m);
  std::stable_sort(s.worst.begin(), s.worst.end(),
                   [](const ModuleSizes& a, const ModuleSizes& b) { return a.ratio() > b.ratio(); });
  if (static_cast<int>(s.worst.size()) > worst_count) s.worst.resize(worst_count);
  return s;
}

std::string package_of(const std::string& module) {
  auto slash = module.find('/');
  return slash == std::string::npos ? "." : module.substr(0, slash);
}

std::vector<PackageSummary> summarize_by_package(const std::vector<ModuleSizes>& modules, int worst_count) {
  std::map<std::string, std::vector<ModuleSizes>> by_package;
  for (const auto& m : modules) by_package[package_of(m.name)].push_back(m);
  std::vector<PackageSummary> out;
  for (const auto& [package, members] : by_package) out.push_back({package, summarize(members, worst_count)});
  return out;
}

}  // namespace evaluator
