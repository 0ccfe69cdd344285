#include "reports/energy.h"

#include <algorithm>
#include <numeric>

namespace reports {
namespace {

// Count and sum of the values inserted at ranks <= r.
class Fenwick {
 public:
  explicit Fenwick(std::size_t n) : count_(n + 1, 0), sum_(n + 1, 0) {}
  void insert(std::size_t rank, double value) {
    for (std::size_t i = rank + 1; i < count_.size(); i += i & -i) ++count_[i], sum_[i] += value;
  }
  void prefix(std::size_t rank, std::size_t& count, double& sum) const {
    count = 0, sum = 0;
    for (std::size_t i = rank + 1; i > 0; i -= i & -i) count += count_[i], sum += sum_[i];
  }

 private:
  std::vector<std::size_t> count_;
  std::vector<double> sum_;
};

}  // namespace

EnergySplitter::EnergySplitter(const std::vector<double>& values) : values_(values), rank_(values.size()) {
  std::vector<std::size_t> by_value(values.size());
  std::iota(by_value.begin(), by_value.end(), 0);
  std::stable_sort(by_value.begin(), by_value.end(),
                   [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  for (std::size_t r = 0; r < by_value.size(); ++r) rank_[by_value[r]] = r;
}

std::vector<double> EnergySplitter::statistics(const std::vector<std::size_t>& order, std::size_t min_segment) const {
  const std::size_t n = order.size();
  std::vector<double> q(n + 1, 0);
  if (min_segment < 2) min_segment = 2;  // a side needs two points for its within-distance
  if (n < 2 * min_segment) return q;

  // to_earlier[t] = sum over s < t of |x_s - x_t|; to_later[t] = over s > t. Ties
  // sit at distinct ranks, which is harmless: their distance is 0 either way.
  std::vector<double> to_earlier(n), to_later(n);
  auto sweep = [&](auto positions, std::vector<double>& out) {
    Fenwick tree(n);
    std::size_t seen = 0;
    double seen_sum = 0;
    for (std::size_t t : positions) {
      std::size_t id = order[t];
      double x = values_[id];
      std::size_t below = 0;
      double below_sum = 0;
      tree.prefix(rank_[id], below, below_sum);
      out[t] = x * below - below_sum + (seen_sum - below_sum) - x * (seen - below);
      tree.insert(rank_[id], x);
      ++seen, seen_sum += x;
    }
  };
  std::vector<std::size_t> forward(n);
  std::iota(forward.begin(), forward.end(), 0);
  sweep(forward, to_earlier);
  sweep(std::vector<std::size_t>(forward.rbegin(), forward.rend()), to_later);

  // Move points one by one from the right side to the left.
  double within_left = 0, between = 0, within_right = std::accumulate(to_earlier.begin(), to_earlier.end(), 0.0);
  for (std::size_t tau = 1; tau + min_segment <= n; ++tau) {
    std::size_t p = tau - 1;
    within_left += to_earlier[p];
    within_right -= to_later[p];
    between += to_later[p] - to_earlier[p];
    if (tau < min_segment) continue;
    double n1 = double(tau), n2 = double(n - tau);
    double divergence =
        2 * between / (n1 * n2) - 2 * within_left / (n1 * (n1 - 1)) - 2 * within_right / (n2 * (n2 - 1));
    q[tau] = n1 * n2 / double(n) * divergence;
  }
  return q;
}

EnergySplit EnergySplitter::best(const std::vector<std::size_t>& order, std::size_t min_segment) const {
  auto q = statistics(order, min_segment);
  const std::size_t side = std::max<std::size_t>(min_segment, 2);
  EnergySplit best;
  for (std::size_t tau = side; tau + side <= order.size(); ++tau)
    if (best.index == 0 || q[tau] > best.q) best = {tau, q[tau]};
  return best;
}

std::vector<double> energy_statistics(const std::vector<double>& values, std::size_t min_segment) {
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  return EnergySplitter(values).statistics(order, min_segment);
}

}  // namespace reports
