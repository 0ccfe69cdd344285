// From a series of levels to changes worth an alert, the bisection verdict
// and the kind of a change. Pure: no database.
#include <doctest/doctest.h>

#include "reports/drift.h"

using reports::Level;

TEST_CASE("level changes: any step at or above a threshold, in the uplift or either total") {
  std::vector<Level> s = {{0.010, 1000, 990}, {0.010, 1000, 990}, {0.004, 1000, 996}, {0.004, 1010, 1006},
                          {0.0041, 1010, 1006}};
  auto c = reports::level_changes(s, {0.002, 0.005});
  REQUIRE(c.size() == 2);  // 0.0001 of uplift with equal totals is under every threshold
  CHECK(c[0].index == 2);  // the uplift fell by 0.6 points (the learned total moved 0.6% too)
  CHECK(c[0].uplift_moved);
  CHECK(c[0].uplift_delta == doctest::Approx(-0.006));
  CHECK(c[1].index == 3);  // both totals +1%, the uplift held
  CHECK_FALSE(c[1].uplift_moved);
  CHECK(c[1].default_moved);
  CHECK(c[1].learned_moved);
  CHECK(c[1].default_delta == doctest::Approx(0.01));
}

TEST_CASE("level changes: thresholds of zero take every step and never an equal level") {
  std::vector<Level> s = {{0.01, 100, 99}, {0.01, 100, 99}, {0.0100001, 100, 99}, {0.0100001, 101, 100}};
  auto c = reports::level_changes(s, {0, 0});
  REQUIRE(c.size() == 2);
  CHECK(c[0].index == 2);
  CHECK(c[1].index == 3);
  CHECK(reports::level_changes({}, {0, 0}).empty());
  CHECK(reports::level_changes({{0.01, 100, 99}}, {0, 0}).empty());
}

TEST_CASE("bisection verdict: Old only while every figure is exactly the old level") {
  Level old{0.0123, 5000, 4938};
  CHECK(reports::verdict_against(old, old) == reports::Verdict::Old);
  CHECK(reports::verdict_against({0.0123, 5001, 4938}, old) == reports::Verdict::New);
  CHECK(reports::verdict_against({0.0123, 5000, 4937}, old) == reports::Verdict::New);
  CHECK(reports::verdict_against({0.0124, 5000, 4938}, old) == reports::Verdict::New);
}

TEST_CASE("change kind: the uplift first, then modules flipped, else sizes") {
  reports::LevelChange drop;
  drop.uplift_moved = true;
  drop.uplift_delta = -0.01;
  CHECK(reports::change_kind(drop, 10, 3) == "uplift-dropped");
  reports::LevelChange rise = drop;
  rise.uplift_delta = 0.01;
  CHECK(reports::change_kind(rise, 0, 3) == "uplift-rose");
  reports::LevelChange sizes;
  sizes.default_moved = true;
  CHECK(reports::change_kind(sizes, 3, 3) == "modules-flipped");
  CHECK(reports::change_kind(sizes, 2, 3) == "size-changed");
  CHECK(reports::change_kind(sizes, 5, 0) == "size-changed");  // 0 turns the flip rule off
}
