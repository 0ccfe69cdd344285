#include "reports/broken_builds.h"

#include <doctest/doctest.h>

using reports::BuildPoint;

TEST_CASE("a build broken for N samples in a row is a run from the first broken check-in after the last good one") {
  // Samples at 0, 10, 20, 30; bisection measured 12 and 14 (broken) and 5 (ok).
  std::vector<BuildPoint> points{{0, true, true},   {5, true, false},   {10, false, true},
                                 {12, false, false}, {14, false, false}, {20, false, true}, {30, false, true}};
  auto runs = reports::broken_runs(points, 3);
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].last_ok == 5);
  CHECK(runs[0].first_broken == 10);
  CHECK(runs[0].nth_sample == 30);
}

TEST_CASE("check-ins bisection measured inside one broken sample are no samples") {
  // One broken week (sample 10); bisection tried three broken check-ins before it.
  std::vector<BuildPoint> points{{0, true, true},   {6, false, false}, {7, false, false},
                                 {8, false, false}, {10, false, true}, {20, true, true}};
  CHECK(reports::broken_runs(points, 3).empty());
  auto one = reports::broken_runs(points, 1);
  REQUIRE(one.size() == 1);
  CHECK(one[0].first_broken == 6);  // where the break began, though no sample
  CHECK(one[0].nth_sample == 10);
}

TEST_CASE("a build broken from the first measured check-in has no good side: no run") {
  std::vector<BuildPoint> points{{0, false, true}, {10, false, true}, {20, false, true}, {30, true, true},
                                 {40, false, true}};
  CHECK(reports::broken_runs(points, 3).empty());
  auto later = reports::broken_runs(points, 1);
  REQUIRE(later.size() == 1);
  CHECK(later[0].last_ok == 30);
  CHECK(later[0].first_broken == 40);
}
