// E-Divisive with means (Matteson & James 2014; as in MongoDB's
// signal_processing_algorithms and Hunter/Otava): split the segment whose best
// split has the largest energy statistic, keep the split if a permutation
// test says it is significant, repeat until one is not.
//
// Why point means rather than all samples: repeated samples of one check-in
// share that check-in's build (layout, machine state), so they are not
// exchangeable with samples of other check-ins; the unit the permutation test
// may shuffle is the check-in. Means also make the cost independent of the
// number of repeats.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <string>

#include "reports/change_points.h"
#include "reports/energy.h"

namespace reports {
namespace {

common::Status check(const NoisyOptions& o) {
  if (!(o.alpha > 0 && o.alpha < 1)) return common::Error{"alpha must be in (0, 1)"};
  if (!(o.min_magnitude >= 0)) return common::Error{"minimum magnitude must be >= 0"};
  if (o.permutations < 1 || 1.0 / (o.permutations + 1) > o.alpha)
    return common::Error{"permutations must be at least 1/alpha - 1 (" + std::to_string(o.permutations) +
                         " can never reach alpha " + std::to_string(o.alpha) + ")"};
  if (o.min_segment < 2) return common::Error{"minimum segment must be at least 2 points"};
  return common::Ok{};
}

// Fisher-Yates on mt19937_64's raw output (fully specified by the standard,
// unlike std::shuffle and the distributions), so a seed means the same
// answer with every standard library. The modulo bias is < n / 2^64.
void shuffle(std::vector<std::size_t>& v, std::mt19937_64& rng) {
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng() % i]);
}

// One segment [begin, end) of the point means, with what its test needs.
struct Segment {
  std::size_t begin, end;
  EnergySplitter splitter;
  EnergySplit best;
};

Segment make_segment(const std::vector<double>& means, std::size_t begin, std::size_t end, std::size_t min_segment) {
  std::vector<double> part(means.begin() + begin, means.begin() + end);
  Segment s{begin, end, EnergySplitter(part), {}};
  std::vector<std::size_t> order(part.size());
  std::iota(order.begin(), order.end(), 0);
  // A constant segment has nothing to split. Its energy statistic is not
  // exactly 0 when the value is not exact in binary (1.234): rounding left
  // over in the identity order beats every permutation, and 60 equal points
  // read as 15 "significant" changes.
  auto [lo, hi] = std::minmax_element(part.begin(), part.end());
  if (part.empty() || *lo == *hi) return s;
  s.best = s.splitter.best(order, min_segment);
  return s;
}

double mean_of(const std::vector<double>& v, std::size_t begin, std::size_t end) {
  return std::accumulate(v.begin() + begin, v.begin() + end, 0.0) / double(end - begin);
}

}  // namespace

common::Result<std::vector<ChangePoint>> e_divisive(const std::vector<std::vector<double>>& samples,
                                                    const NoisyOptions& options) {
  if (auto ok = check(options); !ok) return ok.error();
  std::vector<double> means;
  std::vector<std::size_t> point_of;  // position in `means` -> index in `samples`
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (samples[i].empty()) continue;
    for (double x : samples[i])
      if (!std::isfinite(x)) return common::Error{"sample at point " + std::to_string(i) + " is not finite"};
    means.push_back(std::accumulate(samples[i].begin(), samples[i].end(), 0.0) / double(samples[i].size()));
    point_of.push_back(i);
  }

  const std::size_t m = options.min_segment;
  std::mt19937_64 rng(options.seed);
  std::vector<Segment> segments;
  segments.push_back(make_segment(means, 0, means.size(), m));
  std::map<std::size_t, double> accepted;  // first position of a new level -> p-value
  // Stop counting once the p-value is certain to exceed alpha: a flat series
  // then costs a few permutations, not hundreds.
  const int max_exceed = int(std::floor(options.alpha * (options.permutations + 1) + 1e-9)) - 1;
  for (;;) {
    auto candidate = std::max_element(segments.begin(), segments.end(), [](const Segment& a, const Segment& b) {
      return (a.best.index == 0 ? -INFINITY : a.best.q) < (b.best.index == 0 ? -INFINITY : b.best.q);
    });
    if (candidate == segments.end() || candidate->best.index == 0) break;
    const double observed = candidate->best.q;

    // As in Matteson & James: permute within every segment, compare the best
    // split over all of them, so picking the largest of several is paid for.
    int exceed = 0, done = 0;
    for (; done < options.permutations && exceed <= max_exceed; ++done) {
      double largest = -INFINITY;
      for (const auto& s : segments) {
        if (s.best.index == 0) continue;
        std::vector<std::size_t> order(s.end - s.begin);
        std::iota(order.begin(), order.end(), 0);
        shuffle(order, rng);
        largest = std::max(largest, s.splitter.best(order, m).q);
      }
      if (largest >= observed) ++exceed;
    }
    double p = double(exceed + 1) / double(options.permutations + 1);
    if (exceed > max_exceed || p > options.alpha) break;

    std::size_t begin = candidate->begin, split = begin + candidate->best.index, end = candidate->end;
    accepted[split] = p;
    *candidate = make_segment(means, begin, split, m);
    segments.push_back(make_segment(means, split, end, m));
  }

  // Merge away the smallest move below min_magnitude until none is left, so
  // what remains are levels at least min_magnitude apart from their neighbours.
  std::vector<std::size_t> bounds{0};
  for (auto& [split, p] : accepted) bounds.push_back(split);
  bounds.push_back(means.size());
  for (;;) {
    std::size_t weakest = 0;
    double weakest_move = INFINITY;
    for (std::size_t b = 1; b + 1 < bounds.size(); ++b) {
      double move = std::abs(mean_of(means, bounds[b], bounds[b + 1]) - mean_of(means, bounds[b - 1], bounds[b]));
      // A move within rounding of 0 is no change, whatever min_magnitude says.
      bool none = move <= 1e-12 * std::max(1.0, std::abs(mean_of(means, bounds[b], bounds[b + 1])));
      if ((move < options.min_magnitude || none) && move < weakest_move) weakest = b, weakest_move = move;
    }
    if (weakest == 0) break;
    bounds.erase(bounds.begin() + weakest);
  }

  std::vector<ChangePoint> changes;
  for (std::size_t b = 1; b + 1 < bounds.size(); ++b) {
    double before = mean_of(means, bounds[b - 1], bounds[b]), after = mean_of(means, bounds[b], bounds[b + 1]);
    changes.push_back({point_of[bounds[b]], before, after, after - before, accepted[bounds[b]]});
  }
  return changes;
}

}  // namespace reports
