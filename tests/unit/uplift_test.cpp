#include "evaluator/uplift.h"

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

using namespace evaluator;

TEST_CASE("uplift is one minus the geometric mean of learned/default ratios") {
  // Ratios 0.5 and 2.0: the geometric mean is 1, the total is not.
  auto s = summarize({{"a", 100, 50}, {"b", 100, 200}});
  CHECK(s.modules == 2);
  CHECK(s.geomean_ratio == doctest::Approx(1.0));
  CHECK(s.uplift == doctest::Approx(0.0));
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
  double expected = std::exp((std::log(10.0 / 10) + std::log(99.0 / 100) + std::log(130.0 / 100) + std::log(20.0 / 10) +
                              std::log(101.0 / 100)) /
                             5);
  CHECK(s.geomean_ratio == doctest::Approx(expected));
}

TEST_CASE("an empty evaluation summarizes to nothing, not NaN") {
  auto s = summarize({});
  CHECK(s.modules == 0);
  CHECK(s.uplift == 0);
  CHECK(s.no_worse_share == 0);
}

TEST_CASE("an empty suite summarizes to a neutral figure") {
  auto s = summarize({});
  CHECK(s.geomean_ratio == 1);
  CHECK(s.total_uplift == 0);
  CHECK(s.zero_size == 0);
  CHECK(s.worst.empty());
}

TEST_CASE("a module with no .text under either heuristic is a tie outside the geometric mean") {
  auto s = summarize({{"a", 100, 50}, {"empty", 0, 0}});
  CHECK(s.modules == 2);
  CHECK(s.ties == 1);
  CHECK(s.wins == 1);
  CHECK(s.zero_size == 1);
  CHECK(s.geomean_ratio == doctest::Approx(0.5));  // the empty module does not pull it towards 1
  CHECK(s.no_worse_share == doctest::Approx(1.0));
  CHECK(ModuleSizes{"empty", 0, 0}.ratio() == 1);
}

TEST_CASE("a module empty under one heuristic only is a win or loss, counted in totals, outside the geometric mean") {
  // 96 modules unchanged and one that grows from 0 to 10 bytes: MLGO's +0.01
  // smoothing made that a ratio of 1001 and the suite ~7% worse.
  std::vector<ModuleSizes> modules;
  for (int i = 0; i < 96; ++i) modules.push_back({"m" + std::to_string(i), 1000, 1000});
  modules.push_back({"grew", 0, 10});
  auto s = summarize(modules);
  CHECK(s.modules == 97);
  CHECK(s.uplift == doctest::Approx(0.0));
  CHECK(s.losses == 1);
  CHECK(s.ties == 96);
  CHECK(s.zero_size == 1);
  CHECK(s.total_learned == 96010);
  REQUIRE(s.worst.size() == 1);
  CHECK(s.worst[0].name == "grew");
  CHECK(std::isinf(s.worst[0].ratio()));

  modules.back() = {"vanished", 10, 0};
  s = summarize(modules);
  CHECK(s.uplift == doctest::Approx(0.0));
  CHECK(s.wins == 1);
  CHECK(s.zero_size == 1);
  CHECK(s.total_default == 96010);
  CHECK(s.worst.empty());

  s = summarize({{"grew", 0, 10}, {"empty", 0, 0}});  // nothing has a ratio: neutral, not NaN
  CHECK(s.geomean_ratio == 1);
  CHECK(s.uplift == 0);
  CHECK(s.losses == 1);
  CHECK(s.ties == 1);
}

TEST_CASE("per package: modules group by the name up to the first slash, each summarized alone, packages in name order") {
  CHECK(package_of("zlib/src/inflate.c") == "zlib");
  CHECK(package_of("lonely.c") == ".");
  auto p = summarize_by_package({{"zz/a.c", 100, 90}, {"aa/x/b.c", 100, 110}, {"zz/c.c", 200, 200}, {"aa/d.c", 50, 50}});
  REQUIRE(p.size() == 2);
  CHECK(p[0].package == "aa");
  CHECK(p[0].summary.modules == 2);
  CHECK(p[0].summary.losses == 1);
  CHECK(p[0].summary.ties == 1);
  CHECK(p[0].summary.total_default == 150);
  CHECK(p[0].summary.total_learned == 160);
  CHECK(p[0].summary.worst.empty());
  CHECK(p[1].package == "zz");
  CHECK(p[1].summary.wins == 1);
  CHECK(p[1].summary.ties == 1);
  CHECK(p[1].summary.uplift == doctest::Approx(1 - std::sqrt(0.9)));
  // A project's flat sources are one group, not one row per file.
  auto flat = summarize_by_package({{"a.c", 100, 90}, {"b.c", 100, 100}, {"tests/t.c", 10, 10}});
  REQUIRE(flat.size() == 2);
  CHECK(flat[0].package == ".");
  CHECK(flat[0].summary.modules == 2);
  CHECK(flat[1].package == "tests");
}
