#include <doctest/doctest.h>

#include <cmath>

#include "evaluator/uplift.h"

using namespace evaluator;

TEST_CASE("uplift is one minus the geometric mean of learned/default ratios") {
  // Ratios ~0.5 and ~2.0 (MLGO's +0.01 keeps empty modules finite): the
  // geometric mean is ~1, the total is not.
  auto s = summarize({{"a", 100, 50}, {"b", 100, 200}});
  CHECK(s.modules == 2);
  double expected = std::sqrt((50.01 / 100.01) * (200.01 / 100.01));
  CHECK(s.geomean_ratio == doctest::Approx(expected));
  CHECK(s.uplift == doctest::Approx(1 - expected));
  CHECK(std::abs(s.uplift) < 1e-4);
  CHECK(s.total_default == 200);
  CHECK(s.total_learned == 250);
  CHECK(s.total_uplift == doctest::Approx(-0.25));
  CHECK(s.wins == 1);
  CHECK(s.losses == 1);
  CHECK(s.no_worse_share == doctest::Approx(0.5));
}

TEST_CASE("wins, ties, losses and the worst regressions") {
  auto s = summarize({{"same", 10, 10}, {"small", 100, 99}, {"bad", 100, 130}, {"worse", 10, 20}, {"meh", 100, 101}}, 2);
  CHECK(s.wins == 1);
  CHECK(s.ties == 1);
  CHECK(s.losses == 3);
  CHECK(s.no_worse_share == doctest::Approx(0.4));
  REQUIRE(s.worst.size() == 2);
  CHECK(s.worst[0].name == "worse");
  CHECK(s.worst[1].name == "bad");
  double expected = std::exp((std::log(10.01 / 10.01) + std::log(99.01 / 100.01) + std::log(130.01 / 100.01) +
                              std::log(20.01 / 10.01) + std::log(101.01 / 100.01)) / 5);
  CHECK(s.geomean_ratio == doctest::Approx(expected));
}

TEST_CASE("an empty evaluation summarizes to nothing, not NaN") {
  auto s = summarize({});
  CHECK(s.modules == 0);
  CHECK(s.uplift == 0);
  CHECK(s.no_worse_share == 0);
}
