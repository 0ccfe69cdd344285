#pragma once
// Matteson & James' energy divergence between the two sides of a split, the
// statistic E-Divisive maximizes (alpha = 1, one-dimensional values):
//   q(tau) = n1 n2 / n * (2/(n1 n2) sum|x_i - y_j| - C(n1,2)^-1 sum|x_i - x_k| - C(n2,2)^-1 sum|y_j - y_k|)
// for left x = values[0, tau), right y = values[tau, n). Computed for all
// splits in O(n log n) with a Fenwick tree over ranks, because the
// permutation test evaluates it hundreds of times per candidate.
#include <cstddef>
#include <vector>

namespace reports {

/// The best split of one segment: the first index of its right side, and q there.
struct EnergySplit {
  std::size_t index = 0;
  double q = 0;
};

/// Evaluates q for the splits of a fixed multiset of values in any order.
class EnergySplitter {
 public:
  /// Prepares the ranks of `values` (sorted once, reused by every permutation).
  explicit EnergySplitter(const std::vector<double>& values);

  /// q(tau) for tau in [min_segment, n - min_segment]; 0 elsewhere. `order`
  /// is a permutation of 0..n-1 saying which value sits at each position.
  std::vector<double> statistics(const std::vector<std::size_t>& order, std::size_t min_segment) const;

  /// The split with the largest q (the earliest on ties); index 0 when no
  /// split leaves min_segment points on each side.
  EnergySplit best(const std::vector<std::size_t>& order, std::size_t min_segment) const;

 private:
  std::vector<double> values_;
  std::vector<std::size_t> rank_;  // rank_[i]: position of values_[i] in sorted order (ties broken by index)
};

/// q for every split of `values` in their given order (see EnergySplitter::statistics).
std::vector<double> energy_statistics(const std::vector<double>& values, std::size_t min_segment);

}  // namespace reports
