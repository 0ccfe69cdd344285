#include "reports/module_changes.h"

#include <doctest/doctest.h>

using namespace reports;

TEST_CASE("module changes: flips between win and loss, ties are neither") {
  std::vector<evaluator::ModuleSizes> before{
      {"flip_bad", 100, 90}, {"flip_good", 100, 110}, {"to_tie", 100, 90}, {"from_tie", 100, 100}, {"steady", 100, 95}};
  std::vector<evaluator::ModuleSizes> after{{"flip_bad", 100, 105},
                                            {"flip_good", 100, 98},
                                            {"to_tie", 100, 100},
                                            {"from_tie", 100, 120},
                                            {"steady", 100, 95}};
  auto c = module_changes(before, after, 10).take();
  CHECK(c.win_to_loss == std::vector<std::string>{"flip_bad"});
  CHECK(c.loss_to_win == std::vector<std::string>{"flip_good"});
  CHECK(c.before.default_bytes == 500);
  CHECK(c.before.learned_bytes == 485);
  CHECK(c.after.default_bytes == 500);
  CHECK(c.after.learned_bytes == 518);
  CHECK(c.appeared.empty());
  CHECK(c.disappeared.empty());
}

TEST_CASE("module changes: the largest ratio moves first, capped at top k") {
  std::vector<evaluator::ModuleSizes> before{{"a", 100, 100}, {"b", 100, 100}, {"c", 100, 100}, {"d", 100, 100}};
  std::vector<evaluator::ModuleSizes> after{{"a", 100, 101}, {"b", 100, 80}, {"c", 100, 110}, {"d", 100, 90}};
  auto c = module_changes(before, after, 3).take();
  REQUIRE(c.largest_moves.size() == 3);
  CHECK(c.largest_moves[0].name == "b");
  CHECK(c.largest_moves[0].delta() == doctest::Approx(80.0 / 100.0 - 1));
  CHECK(c.largest_moves[1].name == "c");  // |+0.1| ties |-0.1| of d: by name
  CHECK(c.largest_moves[2].name == "d");
  CHECK(c.largest_moves[1].ratio_before == doctest::Approx(1));
  CHECK(c.largest_moves[1].ratio_after == doctest::Approx(110.0 / 100.0));
}

TEST_CASE("module changes: where the ratios held (a size change), the modules that moved most bytes lead") {
  std::vector<evaluator::ModuleSizes> before{{"a", 100, 90}, {"b", 1000, 900}, {"c", 50, 50}, {"same", 10, 9}};
  std::vector<evaluator::ModuleSizes> after{{"a", 110, 99}, {"b", 2000, 1800}, {"c", 50, 50}, {"same", 10, 9}};
  auto c = module_changes(before, after, 5).take();
  REQUIRE(c.largest_moves.size() == 2);  // c and same did not move
  CHECK(c.largest_moves[0].name == "b");
  CHECK(c.largest_moves[0].bytes_moved() == 1900);
  CHECK(c.largest_moves[0].default_before == 1000);
  CHECK(c.largest_moves[0].learned_after == 1800);
  CHECK(c.largest_moves[1].name == "a");
  // Listed in bytes; the ratio held, so it is not said.
  CHECK(c.largest_moves[0].text() == "b: .text default 1000 → 2000 B, learned 900 → 1800 B");
}

TEST_CASE("a size change lists the modules that moved most bytes first, whatever their ratio did") {
  // a's ratio moved most (its few bytes), b moved the most bytes.
  std::vector<evaluator::ModuleSizes> before{{"a", 100, 95}, {"b", 1236, 1226}},
      after{{"a", 100, 80}, {"b", 1173, 1171}};
  auto c = module_changes(before, after, 5).take();
  REQUIRE(c.largest_moves.size() == 2);
  CHECK(c.largest_moves[0].name == "a");
  auto bytes = reports::by_bytes_moved(c.largest_moves, 1);
  REQUIRE(bytes.size() == 1);
  CHECK(bytes[0].name == "b");
}

TEST_CASE("a module's move reads in bytes, with its ratio where that moved") {
  std::vector<evaluator::ModuleSizes> before{{"a", 100, 95}}, after{{"a", 90, 93}};
  auto c = module_changes(before, after, 5).take();
  REQUIRE(c.largest_moves.size() == 1);
  CHECK(c.largest_moves[0].text() ==
        "a: .text default 100 → 90 B, learned 95 → 93 B (learned/default 0.9500 → 1.0333)");
}

TEST_CASE("module changes: modules that appear or disappear count in their side's totals only") {
  auto c = module_changes({{"old", 50, 40}, {"kept", 10, 10}}, {{"kept", 10, 10}, {"new", 70, 80}}, 5).take();
  CHECK(c.disappeared == std::vector<std::string>{"old"});
  CHECK(c.appeared == std::vector<std::string>{"new"});
  CHECK(c.largest_moves.empty());  // kept did not move
  CHECK(c.before.default_bytes == 60);
  CHECK(c.before.learned_bytes == 50);
  CHECK(c.after.default_bytes == 80);
  CHECK(c.after.learned_bytes == 90);
}

TEST_CASE("module changes: a module named twice is an error") {
  auto c = module_changes({{"x", 1, 1}, {"x", 2, 2}}, {}, 5);
  REQUIRE(!c);
  CHECK(c.error().message == "module 'x' appears twice before the change");
  CHECK(module_changes({}, {}, 5).take().largest_moves.empty());
}

TEST_CASE("feature set: added and removed names, order alone is no change") {
  auto c = feature_set_changed({"callee_users", "caller_users", "nr_ctant_params"},
                               {"nr_ctant_params", "is_callee_avail_external", "callee_users"});
  CHECK(c.changed());
  CHECK(c.added == std::vector<std::string>{"is_callee_avail_external"});
  CHECK(c.removed == std::vector<std::string>{"caller_users"});
  CHECK(!feature_set_changed({"a", "b"}, {"b", "a", "a"}).changed());
  CHECK(!feature_set_changed({}, {}).changed());
}

TEST_CASE("module changes: a module with no .text on a side has no ratio, and is never among the largest moves") {
  // 0 bytes under the default against 12 under the policy has ratio inf;
  // inf - inf is NaN, which used to sit at the top of the list as "inf → inf".
  auto c = module_changes({{"data_only", 0, 12}, {"a", 100, 100}, {"b", 100, 100}},
                          {{"data_only", 0, 12}, {"a", 100, 90}, {"b", 100, 104}}, 5)
               .take();
  REQUIRE(c.largest_moves.size() == 2);
  CHECK(c.largest_moves[0].name == "a");
  CHECK(c.largest_moves[1].name == "b");
}
