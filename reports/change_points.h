#pragma once
// Change points on a drift series (one value per evaluated check-in, oldest
// first): where the level moved, by how much, and how sure we are. Pure
// functions on values; the sweep and the alerts decide what to do with them.
//  - deterministic_steps: for size metrics, where any step is real;
//  - e_divisive: for noisy metrics (compile or run time), E-Divisive with
//    means as Hunter/Otava and MongoDB use, with a permutation test;
//  - windowed_mann_whitney: LNT's way, a rank test between adjacent windows.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/result.h"

namespace reports {

/// One move of the series' level.
struct ChangePoint {
  std::size_t index = 0;  ///< the first point of the new level
  double before = 0;      ///< level before the change
  double after = 0;       ///< level from `index` on
  double magnitude = 0;   ///< after - before
  double p_value = 0;     ///< significance of the change; 0 for deterministic steps
};

/// Every step between consecutive points with |after - before| >= min_magnitude
/// (and never an exact equality), so a step reverted a point later is two
/// changes. A step is between neighbours only: a ramp of steps each below
/// min_magnitude yields nothing. Error on a non-finite value or a negative
/// min_magnitude.
common::Result<std::vector<ChangePoint>> deterministic_steps(const std::vector<double>& values, double min_magnitude);

/// Settings of the significance-tested detectors.
struct NoisyOptions {
  double alpha = 0.01;          ///< a change is kept when its p-value <= alpha
  double min_magnitude = 0;     ///< changes whose |after - before| is below are merged away
  int permutations = 199;       ///< permutations per test; needs 1/(permutations+1) <= alpha
  std::uint64_t seed = 1;       ///< the permutation test is deterministic for a seed
  std::size_t min_segment = 3;  ///< fewest points between two changes (>= 2)
};

/// E-Divisive with means (Matteson & James' energy statistic, alpha = 1) over
/// the per-point means of repeated samples; a point with no samples (a broken
/// build) is left out and never starts a level. Error on bad options or a
/// non-finite sample.
common::Result<std::vector<ChangePoint>> e_divisive(const std::vector<std::vector<double>>& samples,
                                                    const NoisyOptions& options);

/// Two-sided p-value of the Mann-Whitney U test (normal approximation with tie
/// and continuity correction); 1 when either side is empty or all values tie.
double mann_whitney_p(const std::vector<double>& a, const std::vector<double>& b);

/// LNT's test between the samples of `window` points before and from each
/// index with samples; of a run of adjacent significant indices the one with
/// the lowest p-value is the change; levels are the windows' medians.
/// `alpha` is the false-alarm rate of the whole series: each index is tested
/// at alpha over the number of indices (Bonferroni). Error on a zero
/// window, alpha outside (0, 1), a negative min_magnitude or a non-finite sample.
common::Result<std::vector<ChangePoint>> windowed_mann_whitney(const std::vector<std::vector<double>>& samples,
                                                               std::size_t window, double alpha, double min_magnitude);

}  // namespace reports
