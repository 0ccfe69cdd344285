#pragma once
// When a broken build becomes an alert: after N sampled check-ins in a row
// failed to build. Bisection measures check-ins between samples too; those
// place where the break began but are no samples, so three broken check-ins
// bisection tried inside one broken week do not make "broken for 3 samples".
#include <cstddef>
#include <vector>

namespace reports {

/// One measured check-in, in first-parent order.
struct BuildPoint {
  std::size_t position = 0;  ///< on the first-parent history
  bool ok = false;           ///< it built
  bool sample = true;        ///< on the project's grid (false: measured by bisection)
};

/// A stretch that broke after a check-in that built and stayed broken for
/// the required samples.
struct BrokenRun {
  std::size_t last_ok = 0;        ///< the last check-in that built before it
  std::size_t first_broken = 0;   ///< the first measured one that did not, sample or not
  std::size_t nth_sample = 0;     ///< the sample that completed the run
};

/// Runs of at least `samples_needed` (>= 1) broken samples after a check-in
/// that built; a stretch broken from the first measured check-in has no
/// known-good side and is left out. `points` is in position order.
std::vector<BrokenRun> broken_runs(const std::vector<BuildPoint>& points, int samples_needed);

}  // namespace reports
