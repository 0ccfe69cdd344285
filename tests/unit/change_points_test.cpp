#include "reports/change_points.h"

#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "reports/energy.h"

using namespace reports;

namespace {

// `points` points per level, each with `repeats` gaussian samples around the level.
std::vector<std::vector<double>> noisy(const std::vector<double>& levels, std::size_t points, std::size_t repeats,
                                       double sigma, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0, sigma);
  std::vector<std::vector<double>> series;
  for (double level : levels)
    for (std::size_t p = 0; p < points; ++p) {
      series.emplace_back();
      for (std::size_t r = 0; r < repeats; ++r) series.back().push_back(level + noise(rng));
    }
  return series;
}

std::vector<std::vector<double>> exact(const std::vector<double>& values) {
  std::vector<std::vector<double>> series;
  for (double v : values) series.push_back({v});
  return series;
}

// The textbook formula, term by term, to check the O(n log n) version against.
double naive_q(const std::vector<double>& x, std::size_t tau) {
  double between = 0, left = 0, right = 0;
  std::size_t n = x.size();
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      double d = std::abs(x[i] - x[j]);
      if (j < tau)
        left += d;
      else if (i >= tau)
        right += d;
      else
        between += d;
    }
  double n1 = double(tau), n2 = double(n - tau);
  return n1 * n2 / double(n) * (2 * between / (n1 * n2) - left / (n1 * (n1 - 1) / 2) - right / (n2 * (n2 - 1) / 2));
}

}  // namespace

TEST_CASE("deterministic steps: every step between neighbours, reverts included") {
  auto steps = deterministic_steps({10, 10, 12, 12, 12, 9}, 0).take();
  REQUIRE(steps.size() == 2);
  CHECK(steps[0].index == 2);
  CHECK(steps[0].before == 10);
  CHECK(steps[0].after == 12);
  CHECK(steps[0].magnitude == 2);
  CHECK(steps[0].p_value == 0);
  CHECK(steps[1].index == 5);
  CHECK(steps[1].magnitude == -3);

  // A step reverted a point later is two changes.
  auto revert = deterministic_steps({5, 5, 7, 5, 5}, 1).take();
  REQUIRE(revert.size() == 2);
  CHECK(revert[0].index == 2);
  CHECK(revert[0].magnitude == 2);
  CHECK(revert[1].index == 3);
  CHECK(revert[1].magnitude == -2);
}

TEST_CASE("deterministic steps: the minimum magnitude filters, and zero still ignores equality") {
  auto big = deterministic_steps({10, 10, 12, 12, 12, 9}, 2.5).take();
  REQUIRE(big.size() == 1);
  CHECK(big[0].index == 5);
  CHECK(deterministic_steps({3, 3, 3, 3}, 0).take().empty());
  // A tiny step is real for a deterministic metric.
  CHECK(deterministic_steps({1.0, 1.0 + 1e-9}, 0).take().size() == 1);
}

TEST_CASE("deterministic steps: empty, single point, ramps") {
  CHECK(deterministic_steps({}, 0).take().empty());
  CHECK(deterministic_steps({4}, 0).take().empty());
  // A ramp is a step at every check-in when each is large enough, and
  // nothing when each is below the minimum (steps compare neighbours only).
  std::vector<double> ramp;
  for (int i = 0; i < 10; ++i) ramp.push_back(i);
  CHECK(deterministic_steps(ramp, 1).take().size() == 9);
  CHECK(deterministic_steps(ramp, 1.5).take().empty());
}

TEST_CASE("deterministic steps: bad input is a one-line error") {
  auto nan = deterministic_steps({1, NAN, 2}, 0);
  REQUIRE(!nan);
  CHECK(nan.error().message == "value at point 1 is not finite");
  CHECK(!deterministic_steps({1, 2}, -1));
}

TEST_CASE("the energy statistic matches the textbook formula, ties included") {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(0, 1);
  for (std::size_t n : {4u, 9u, 30u}) {
    std::vector<double> x;
    for (std::size_t i = 0; i < n; ++i) x.push_back(i % 3 == 0 ? 1.0 : std::round(noise(rng) * 2));  // many ties
    auto q = energy_statistics(x, 2);
    for (std::size_t tau = 2; tau + 2 <= n; ++tau) CHECK(q[tau] == doctest::Approx(naive_q(x, tau)));
    CHECK(q[0] == 0);
    CHECK(q[1] == 0);
  }
  // It peaks at a clean step.
  std::vector<double> step{0, 0, 0, 0, 0, 0, 4, 4, 4, 4};
  auto best = EnergySplitter(step).best({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 2);
  CHECK(best.index == 6);
  CHECK(best.q == doctest::Approx(naive_q(step, 6)));
}

TEST_CASE("e-divisive: empty, single-point and all-equal series raise nothing") {
  NoisyOptions o;
  CHECK(e_divisive({}, o).take().empty());
  CHECK(e_divisive({{1, 2, 3}}, o).take().empty());
  CHECK(e_divisive(std::vector<std::vector<double>>(60, {2.5, 2.5}), o).take().empty());
  // Values not exact in binary, whose sums round differently by order.
  for (double v : {0.1, 1.234, 1e6 + 0.3})
    CHECK(e_divisive(std::vector<std::vector<double>>(60, {v, v}), o).take().empty());
}

TEST_CASE("e-divisive: a clean step is found where it is, significant") {
  std::vector<double> values(30, 100.0);
  values.resize(60, 101.0);
  auto changes = e_divisive(exact(values), {}).take();
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].index == 30);
  CHECK(changes[0].before == 100);
  CHECK(changes[0].after == 101);
  CHECK(changes[0].magnitude == 1);
  CHECK(changes[0].p_value <= 0.01);
}

TEST_CASE("e-divisive: steps under noise, with repeated samples") {
  // Steps of 3 and 2 sigma; the point means of 5 repeats halve the noise.
  auto series = noisy({0, 3, 1}, 40, 5, 1.0, 42);
  auto changes = e_divisive(series, {}).take();
  REQUIRE(changes.size() == 2);
  CHECK(changes[0].index == 40);
  CHECK(changes[0].magnitude == doctest::Approx(3).epsilon(0.1));
  CHECK(changes[1].index == 80);
  CHECK(changes[1].magnitude == doctest::Approx(-2).epsilon(0.1));
  // Deterministic for a seed.
  auto again = e_divisive(series, {}).take();
  REQUIRE(again.size() == 2);
  CHECK(again[0].p_value == changes[0].p_value);
  CHECK(again[1].index == changes[1].index);
}

TEST_CASE("e-divisive: flat noisy series raise nothing at alpha 0.01") {
  // Under no change each series has a ~1% chance of a false alarm; over 30
  // seeds, two or more would mean the test is miscalibrated (p ~ 4%).
  int alarms = 0;
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    NoisyOptions o;
    o.seed = seed;
    alarms += !e_divisive(noisy({5}, 100, 3, 1.0, 1000 + seed), o).take().empty();
  }
  CHECK(alarms <= 1);
}

TEST_CASE("e-divisive: a slow ramp is a short staircase, never a point per check-in") {
  // A ramp has no single change point. We report it as the few steps that
  // are each significant and at least min_magnitude, so the bisection has a
  // place where the level moved; as the levels of a ramp are monotone, their
  // moves add up to the rise, so there are at most rise / min_magnitude.
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(0, 1);
  std::vector<double> ramp;
  for (int i = 0; i < 200; ++i) ramp.push_back(10.0 * i / 199 + noise(rng));
  NoisyOptions o;
  o.min_magnitude = 2;
  auto changes = e_divisive(exact(ramp), o).take();
  CHECK(changes.size() >= 1);  // the drift is not missed
  CHECK(changes.size() <= 5);
  for (std::size_t i = 0; i < changes.size(); ++i) {
    CHECK(changes[i].magnitude >= 2);
    if (i > 0) CHECK(changes[i].index > changes[i - 1].index);
  }
  // Without a minimum the noise bounds it: a step must be long enough for
  // its move to stand out of sigma = 1 at a slope of 0.05 per point, tens of
  // points, so ~5 steps here, nowhere near the 66 of a split every 3 points.
  auto unbounded = e_divisive(exact(ramp), {}).take();
  CHECK(unbounded.size() >= 1);
  CHECK(unbounded.size() <= 10);
}

TEST_CASE("e-divisive: no level is shorter than min_segment") {
  std::vector<double> values(10, 0.0);
  values.resize(40, 5.0);
  auto found = e_divisive(exact(values), {}).take();
  REQUIRE(found.size() == 1);
  CHECK(found[0].index == 10);
  NoisyOptions o;
  o.min_segment = 11;
  auto bounded = e_divisive(exact(values), o).take();
  REQUIRE_FALSE(bounded.empty());  // the step is still found, at the nearest split allowed
  for (const auto& c : bounded) {
    CHECK(c.index >= 11);
    CHECK(values.size() - c.index >= 11);
  }
}

TEST_CASE("e-divisive: min_magnitude merges away small significant moves") {
  std::vector<double> values(30, 0.0);
  values.resize(60, 0.5);
  CHECK(e_divisive(exact(values), {}).take().size() == 1);
  NoisyOptions o;
  o.min_magnitude = 1;
  CHECK(e_divisive(exact(values), o).take().empty());
}

TEST_CASE("e-divisive: points without samples are left out and never start a level") {
  std::vector<std::vector<double>> series;
  for (int i = 0; i < 30; ++i) series.push_back({10});
  series.push_back({});  // a broken build
  for (int i = 0; i < 30; ++i) series.push_back({12});
  auto changes = e_divisive(series, {}).take();
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].index == 31);
}

TEST_CASE("e-divisive: bad options and samples are one-line errors") {
  NoisyOptions o;
  o.alpha = 0;
  CHECK(e_divisive({}, o).error().message == "alpha must be in (0, 1)");
  o = {};
  o.permutations = 50;  // 1/51 > 0.01: could never be significant
  CHECK(!e_divisive({}, o));
  o = {};
  o.min_segment = 1;
  CHECK(!e_divisive({}, o));
  CHECK(e_divisive({{1}, {2, INFINITY}}, {}).error().message == "sample at point 1 is not finite");
}

TEST_CASE("mann-whitney: the normal approximation with tie and continuity correction") {
  // U = 0, mu = 12.5, var = 25 * 11 / 12: z = 12 / 4.787.
  CHECK(mann_whitney_p({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}) == doctest::Approx(0.0121858));
  CHECK(mann_whitney_p({6, 7, 8, 9, 10}, {1, 2, 3, 4, 5}) == doctest::Approx(0.0121858));
  // Midranks 2, 5, 7.5: U = 1, mu = 8; ties 24 + 24 + 6 give var = 16/12 * (9 - 54/56).
  CHECK(mann_whitney_p({1, 1, 1, 2}, {2, 2, 3, 3}) == doctest::Approx(0.0470574));
  CHECK(mann_whitney_p({1, 2, 3}, {1, 2, 3}) == 1);
  CHECK(mann_whitney_p({4, 4}, {4, 4, 4}) == 1);
  CHECK(mann_whitney_p({}, {1, 2}) == 1);
}

TEST_CASE("windowed mann-whitney: one change per step, none on a flat series") {
  auto series = noisy({0, 2}, 20, 5, 1.0, 9);
  auto changes = windowed_mann_whitney(series, 5, 0.001, 0).take();
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].index == 20);
  CHECK(changes[0].magnitude == doctest::Approx(2).epsilon(0.25));
  CHECK(changes[0].p_value <= 0.001);
  // Too small a move for the minimum.
  CHECK(windowed_mann_whitney(series, 5, 0.001, 5).take().empty());
  CHECK(windowed_mann_whitney(noisy({0}, 60, 5, 1.0, 11), 5, 0.001, 0).take().empty());
  CHECK(windowed_mann_whitney({}, 5, 0.001, 0).take().empty());
  CHECK(windowed_mann_whitney(std::vector<std::vector<double>>(30, {1, 1}), 5, 0.001, 0).take().empty());
}

TEST_CASE("windowed mann-whitney: a regression reverted a few check-ins later is two changes, not one") {
  auto series = noisy({0}, 30, 3, 0.1, 1);
  for (auto part : {noisy({5}, 6, 3, 0.1, 2), noisy({0}, 30, 3, 0.1, 3)}) series.insert(series.end(), part.begin(), part.end());
  auto changes = windowed_mann_whitney(series, 5, 0.01, 0).take();
  REQUIRE(changes.size() == 2);
  CHECK(changes[0].index == 30);
  CHECK(changes[0].magnitude > 4);
  CHECK(changes[1].index == 36);
  CHECK(changes[1].magnitude < -4);
}

TEST_CASE("windowed mann-whitney: a step whose p-values hover about the level near it is one change, not two") {
  // One 3-sigma step in 100 single-sample points, window 10, alpha 0.05:
  // near the step the per-position p-values cross the Bonferroni level more
  // than once, and each crossing once began a change of its own.
  int split = 0, found = 0;
  for (unsigned seed = 1; seed <= 100; ++seed) {
    auto changes = windowed_mann_whitney(noisy({0, 3}, 50, 1, 1.0, seed), 10, 0.05, 0).take();
    found += !changes.empty();
    split += changes.size() > 1;
    for (const auto& c : changes) CHECK(std::abs(static_cast<long>(c.index) - 50) <= 5);
  }
  CHECK(split == 0);
  CHECK(found >= 85);  // and still found: at 3 sigma, window 10, in about nine series of ten
}

TEST_CASE("windowed mann-whitney: alpha is the whole series' false-alarm rate, and no level starts on an empty point") {
  // A flat noisy year, tested at 361 positions: at alpha each, about three
  // false changes a series; at alpha over the positions, about one series in
  // a hundred has one. Two or more of 30 would mean it is miscalibrated.
  int alarmed = 0;
  for (std::uint64_t seed = 1; seed <= 30; ++seed)
    alarmed += !windowed_mann_whitney(noisy({0}, 365, 5, 1.0, seed), 5, 0.01, 0).take().empty();
  CHECK(alarmed <= 1);
  // A broken build between two clean levels: the new level starts after it.
  std::vector<std::vector<double>> gap(20, {10, 10, 10});
  gap.resize(41, {12, 12, 12});
  gap[20].clear();
  auto changes = windowed_mann_whitney(gap, 5, 0.01, 0).take();
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].index == 21);
}

TEST_CASE("windowed mann-whitney: bad input is a one-line error") {
  CHECK(windowed_mann_whitney({}, 0, 0.01, 0).error().message == "window must be at least one point");
  CHECK(!windowed_mann_whitney({}, 3, 1.5, 0));
  CHECK(!windowed_mann_whitney({}, 3, 0.01, -1));
  CHECK(!windowed_mann_whitney({{NAN}}, 3, 0.01, 0));
}
