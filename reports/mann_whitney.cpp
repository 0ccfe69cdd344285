// The rank test LNT runs between runs of samples: distribution-free, so
// skewed timing noise does not fake a change, with the tie correction that
// matters for timers of coarse resolution.
#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <optional>
#include <numeric>
#include <string>

#include "reports/change_points.h"

namespace reports {
namespace {

double median(std::vector<double> v) {
  auto mid = v.begin() + v.size() / 2;
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2) return *mid;
  return (*mid + *std::max_element(v.begin(), mid)) / 2;
}

// All samples of points [begin, end).
std::vector<double> pooled(const std::vector<std::vector<double>>& samples, std::size_t begin, std::size_t end) {
  std::vector<double> all;
  for (std::size_t i = begin; i < end; ++i) all.insert(all.end(), samples[i].begin(), samples[i].end());
  return all;
}

}  // namespace

double mann_whitney_p(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) return 1;
  struct Obs {
    double value;
    bool from_a;
  };
  std::vector<Obs> all;
  for (double x : a) all.push_back({x, true});
  for (double x : b) all.push_back({x, false});
  std::sort(all.begin(), all.end(), [](const Obs& l, const Obs& r) { return l.value < r.value; });

  // Midranks for ties; sum (t^3 - t) over tie groups for the variance.
  const double n1 = double(a.size()), n2 = double(b.size()), n = n1 + n2;
  double rank_sum_a = 0, ties = 0;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i;
    while (j < all.size() && all[j].value == all[i].value) ++j;
    double midrank = (double(i + 1) + double(j)) / 2, t = double(j - i);
    for (std::size_t k = i; k < j; ++k)
      if (all[k].from_a) rank_sum_a += midrank;
    ties += t * t * t - t;
    i = j;
  }
  double u = rank_sum_a - n1 * (n1 + 1) / 2;
  double variance = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)));
  if (!(variance > 0)) return 1;
  double z = std::max(0.0, std::abs(u - n1 * n2 / 2) - 0.5) / std::sqrt(variance);
  boost::math::normal standard;
  return std::min(1.0, 2 * boost::math::cdf(boost::math::complement(standard, z)));
}

common::Result<std::vector<ChangePoint>> windowed_mann_whitney(const std::vector<std::vector<double>>& samples,
                                                               std::size_t window, double alpha, double min_magnitude) {
  if (window == 0) return common::Error{"window must be at least one point"};
  if (!(alpha > 0 && alpha < 1)) return common::Error{"alpha must be in (0, 1)"};
  if (!(min_magnitude >= 0)) return common::Error{"minimum magnitude must be >= 0"};
  for (std::size_t i = 0; i < samples.size(); ++i)
    for (double x : samples[i])
      if (!std::isfinite(x)) return common::Error{"sample at point " + std::to_string(i) + " is not finite"};

  std::vector<ChangePoint> changes;
  // The position significant last: a run of them is one step. Near a step
  // the p-values hover about the per-position level, so a run ends only
  // after `window` positions in a row that are not significant (as far as
  // one step's windows reach); else one step came out as two or three.
  std::optional<std::size_t> last_significant;
  // Every position is a test: at alpha each, a flat noisy year of 365 points
  // raised about three false changes. `alpha` is the whole series' (Bonferroni).
  const double per_position = samples.size() >= 2 * window ? alpha / double(samples.size() - 2 * window + 1) : alpha;
  for (std::size_t i = window; i + window <= samples.size(); ++i) {
    // A level starts on a point with samples, never on a broken build's.
    if (samples[i].empty()) continue;  // a run goes on across it
    auto before = pooled(samples, i - window, i), after = pooled(samples, i, i + window);
    double p = mann_whitney_p(before, after);
    ChangePoint c{i, 0, 0, 0, p};
    bool significant = p <= per_position;
    if (significant) {
      c.before = median(before), c.after = median(after), c.magnitude = c.after - c.before;
      significant = c.magnitude != 0 && std::abs(c.magnitude) >= min_magnitude;
    }
    if (!significant) continue;
    // Within a run, the boundary that separates the windows best is the step.
    // A move the other way is another change (a regression reverted soon after).
    if (!last_significant || i - *last_significant >= window || (c.magnitude > 0) != (changes.back().magnitude > 0))
      changes.push_back(c);
    else if (auto& last = changes.back();
             p < last.p_value || (p == last.p_value && std::abs(c.magnitude) > std::abs(last.magnitude)))
      last = c;
    last_significant = i;
  }
  return changes;
}

}  // namespace reports
