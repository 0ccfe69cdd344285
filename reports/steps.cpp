// Deterministic metrics: a size does not wobble, so every step is real and
// the only question is whether it is large enough to report.
#include <cmath>
#include <string>

#include "reports/change_points.h"

namespace reports {

common::Result<std::vector<ChangePoint>> deterministic_steps(const std::vector<double>& values, double min_magnitude) {
  if (!(min_magnitude >= 0)) return common::Error{"minimum magnitude must be >= 0"};
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i])) return common::Error{"value at point " + std::to_string(i) + " is not finite"};
  std::vector<ChangePoint> steps;
  for (std::size_t i = 1; i < values.size(); ++i) {
    double delta = values[i] - values[i - 1];
    if (delta != 0 && std::abs(delta) >= min_magnitude) steps.push_back({i, values[i - 1], values[i], delta, 0});
  }
  return steps;
}

}  // namespace reports
