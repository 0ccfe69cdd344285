// From a series of levels to changes worth an alert, the bisection verdict
// and the kind of a change. Pure: no database.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <set>

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

TEST_CASE("compared levels cover the modules both sides measured, so a module that failed on one side moves nothing") {
  std::vector<evaluator::ModuleSizes> before = {{"a", 1000, 900}, {"b", 4000, 4000}, {"gone", 50000, 40000}};
  std::vector<evaluator::ModuleSizes> after = {{"b", 4000, 4000}, {"a", 1000, 900}, {"new", 10, 10}};
  auto c = reports::compare_levels(before, after);
  CHECK(c.before.total_default == 5000);
  CHECK(c.after.total_default == 5000);
  CHECK(c.before.total_learned == 4900);
  CHECK(c.before.uplift == c.after.uplift);  // bit-equal: the same sizes in the same order
  CHECK(c.before.uplift == doctest::Approx(1 - std::sqrt(0.9)));
  CHECK(c.only_before == std::vector<std::string>{"gone"});
  CHECK(c.only_after == std::vector<std::string>{"new"});
  CHECK(reports::level_changes({c.before, c.after}, {0, 0}).empty());
  CHECK(reports::verdict_against(c.after, c.before) == reports::Verdict::Old);
  // A real change on a module both measured is still seen.
  after[1].learned_bytes = 1000;
  auto moved = reports::compare_levels(before, after);
  CHECK(reports::level_changes({moved.before, moved.after}, {0.002, 0.002}).size() == 1);
}

TEST_CASE("a module of no .text on one side that gains some, a tie on both, moves no uplift") {
  std::vector<evaluator::ModuleSizes> before = {{"a", 100, 90}, {"data-only", 0, 0}};
  std::vector<evaluator::ModuleSizes> after = {{"a", 100, 90}, {"data-only", 40, 40}};
  auto c = reports::compare_levels(before, after);
  // Each side alone would read 10% then 5.1%: a drop with no module worse.
  CHECK(c.before.uplift == doctest::Approx(0.10));
  CHECK(c.after.uplift == c.before.uplift);
  CHECK(c.after.total_default == 140);  // the totals still take it
  CHECK(reports::level_changes({c.before, c.after}, {0.002, 1}).empty());
  // It grows under the policy alone: a loss, which the totals show.
  after[1].learned_bytes = 60;
  auto lost = reports::compare_levels(before, after);
  CHECK(reports::level_changes({lost.before, lost.after}, {0.002, 0.002}).size() == 1);
}

TEST_CASE("a module that fails at one sample and comes back changed still shows its change") {
  // m grew 30% between a and c; at b it failed to compile (absent).
  std::vector<evaluator::ModuleSizes> a{{"m", 1000, 900}, {"n", 1000, 1000}};
  std::vector<evaluator::ModuleSizes> b{{"n", 1000, 1000}};
  std::vector<evaluator::ModuleSizes> c{{"m", 1000, 1170}, {"n", 1000, 1000}};
  // Compared only where both sides measured it, neither step sees m.
  CHECK(reports::compare_levels(a, b).after.uplift == reports::compare_levels(a, b).before.uplift);
  CHECK(reports::compare_levels(b, c).after.uplift == reports::compare_levels(b, c).before.uplift);
  auto filled = reports::carried_forward({a, b, c}, {0, 4, 9});
  REQUIRE(filled.size() == 3);
  auto ab = reports::compare_levels(filled[0].sizes, filled[1].sizes);
  auto bc = reports::compare_levels(filled[1].sizes, filled[2].sizes);
  CHECK(ab.after.uplift == ab.before.uplift);  // b's failure moves nothing
  CHECK(bc.after.uplift < bc.before.uplift - 0.1);  // the change shows where m comes back
  CHECK(bc.only_before.empty());
  CHECK(bc.only_after.empty());
  // Only b filled anything in: m, as measured at a.
  CHECK(filled[0].carried.empty());
  REQUIRE(filled[1].carried.size() == 1);
  CHECK(filled[1].carried.at("m").measured_at == 0);
  CHECK(filled[1].carried.at("m").size.learned_bytes == 900);
  CHECK(filled[2].carried.empty());
}

TEST_CASE("a change seen where a failed module comes back reaches back to its last measurement") {
  // m was last measured at position 3 and failed at 7; at 8 it is back.
  std::map<std::string, reports::CarriedSize> carried{{"m", {{"m", 1000, 900}, 3}}, {"n", {{"n", 500, 500}, 5}}};
  std::vector<std::string> moved;
  // Back with other sizes: the change may lie anywhere after 3, so 8 is not named alone.
  CHECK(reports::change_reaches_back_to(7, carried, {{"m", 1000, 1170}, {"n", 500, 500}}, &moved) == 3);
  CHECK(moved == std::vector<std::string>{"m"});
  // Back unchanged (n too): it moved nothing, and the change is 7's to 8's.
  moved.clear();
  CHECK(reports::change_reaches_back_to(7, carried, {{"m", 1000, 900}, {"n", 500, 500}}, &moved) == 7);
  CHECK(moved.empty());
  // Still failing at the later point: nothing to say about it.
  CHECK(reports::change_reaches_back_to(7, carried, {{"n", 500, 500}}, nullptr) == 7);
}

namespace {

/// find_steps over a plain series: each pair compared as it stands.
std::vector<reports::FoundStep> steps_of(const std::vector<Level>& s, const std::vector<bool>& sample,
                                         reports::DriftThresholds t) {
  return reports::find_steps(sample, [&](std::size_t a, std::size_t b) { return std::pair{s[a], s[b]}; }, t);
}

}  // namespace

TEST_CASE("a change made in parts between two samples is one spread change over their range") {
  // Two weekly samples 0.3 points apart; bisection measured the check-ins
  // between, each of which took 0.1 of it: no consecutive pair moves 0.2.
  std::vector<Level> s = {{0.050, 1000, 950}, {0.050, 1000, 950}, {0.049, 1000, 951}, {0.048, 1000, 952},
                          {0.047, 1000, 953}};
  auto found = steps_of(s, {true, false, false, false, true}, {0.002, 0.01});
  REQUIRE(found.size() == 1);
  CHECK(found[0].spread);
  CHECK(found[0].before == 0);
  CHECK(found[0].after == 4);
  CHECK(found[0].change.uplift_moved);
  CHECK(found[0].change.uplift_delta == doctest::Approx(-0.003));
  // Without check-ins between, the same samples are an ordinary step.
  found = steps_of({s[0], s[4]}, {true, true}, {0.002, 0.01});
  REQUIRE(found.size() == 1);
  CHECK_FALSE(found[0].spread);
}

TEST_CASE("a spread change's range runs from the first check-in that moved to the last, not from sample to sample") {
  auto point = [](std::int64_t learned_a, std::int64_t learned_b) {
    return reports::FilledPoint{{{"a.c", 1000, learned_a}, {"b.c", 500, learned_b}}, {}};
  };
  // Sample, a docs check-in, two check-ins that move a little each, a
  // compiler byte-identical to the last, the next sample.
  std::vector<reports::FilledPoint> p = {point(950, 490), point(950, 490), point(951, 490),
                                         point(951, 492), point(951, 492), point(951, 492)};
  std::vector<const reports::FilledPoint*> ptrs;
  for (const auto& x : p) ptrs.push_back(&x);
  CHECK(reports::moving_span(ptrs) == std::pair<std::size_t, std::size_t>{1, 3});
  // Moving at both ends: the samples' range, whole.
  p[1] = point(949, 490);
  p[5] = point(951, 493);
  CHECK(reports::moving_span(ptrs) == std::pair<std::size_t, std::size_t>{0, 5});
  // A module the next point no longer lists is a move too.
  p[1] = p[0];
  p[5] = p[4];
  p[4].sizes.pop_back();
  p[5].sizes.pop_back();
  CHECK(reports::moving_span(ptrs) == std::pair<std::size_t, std::size_t>{1, 4});
  // Nothing moved: the whole range.
  std::vector<const reports::FilledPoint*> flat = {&p[0], &p[1]};
  CHECK(reports::moving_span(flat) == std::pair<std::size_t, std::size_t>{0, 1});
}

TEST_CASE("a step between samples that one check-in inside made is that check-in's alone") {
  // The samples moved 0.35 points; 0.3 of it in one step between two of
  // bisection's check-ins: that step is the change, not the samples' range.
  std::vector<Level> s = {{0.050, 1000, 950}, {0.0495, 1000, 950}, {0.0465, 1000, 953}, {0.0465, 1000, 953},
                          {0.0465, 1000, 953}};
  auto found = steps_of(s, {true, false, false, false, true}, {0.002, 0.01});
  REQUIRE(found.size() == 1);
  CHECK_FALSE(found[0].spread);
  CHECK(found[0].before == 1);
  CHECK(found[0].after == 2);
}

TEST_CASE("a size step inside two samples does not carry the uplift drop made in small parts beside it") {
  // The samples' uplift fell 0.3 points in two parts of 0.15 (check-ins 1
  // and 3); check-in 4 grew both totals 0.5% and left the uplift alone.
  std::vector<Level> s = {{0.050, 100000, 95000}, {0.0485, 100000, 95150}, {0.0485, 100000, 95150},
                          {0.047, 100000, 95300}, {0.047, 100500, 95775}, {0.047, 100500, 95775}};
  auto found = steps_of(s, {true, false, false, false, false, true}, {0.002, 0.002});
  REQUIRE(found.size() == 2);
  CHECK_FALSE(found[0].spread);  // the size step, check-in 4's alone
  CHECK(found[0].after == 4);
  CHECK_FALSE(found[0].change.uplift_moved);
  CHECK(found[1].spread);  // and the drop, over the samples' range
  CHECK(found[1].before == 0);
  CHECK(found[1].after == 5);
  CHECK(found[1].change.uplift_moved);
  CHECK(found[1].change.uplift_delta == doctest::Approx(-0.003));
  // The default total's move is the size step's alone; the learned total
  // grew 0.32% besides, in the drop's parts.
  CHECK_FALSE(found[1].change.default_moved);
  CHECK(found[1].change.default_delta == doctest::Approx(0).epsilon(1e-12));
  CHECK(found[1].change.learned_moved);
  CHECK(found[1].change.learned_delta == doctest::Approx(95300.0 / 95000 - 1));
}

TEST_CASE("an uplift rise inside two samples that hides a drop in parts leaves the drop, though the samples barely moved") {
  // The samples: -0.05 points in all; inside, one step rose 0.25 and small parts fell 0.3.
  std::vector<Level> s = {{0.050, 1000, 950}, {0.0525, 1000, 950}, {0.051, 1000, 950},
                          {0.0495, 1000, 950}, {0.0495, 1000, 950}};
  auto found = steps_of(s, {true, false, false, false, true}, {0.002, 0.01});
  REQUIRE(found.size() == 2);
  CHECK(found[0].after == 1);
  CHECK(found[0].change.uplift_delta == doctest::Approx(0.0025));
  CHECK(found[1].spread);
  CHECK(found[1].change.uplift_delta == doctest::Approx(-0.003));
  // Its alert says the drop, not the samples' levels alone, which barely moved.
  CHECK(reports::uplift_change_text(true, true, found[1].change.uplift_delta, s[0].uplift, s[4].uplift) ==
        "dropped 0.30 points in parts (samples +5.00% → +4.95%)");
  CHECK(reports::uplift_change_text(false, false, 0.0025, 0.05, 0.0525) == "rose from +5.00% to +5.25%");
  // A level a hair below zero is "+0.00%": no "-0.00%" that reads as a loss.
  CHECK(reports::uplift_change_text(true, false, -0.003, 0.003, -0.00001) == "dropped from +0.30% to +0.00%");
  // Which total moved: here the default's shrank, the policy's did not grow.
  CHECK(reports::uplift_change_text(true, false, -0.007, 0.008, 0.001, -0.0070, 0.00002) ==
        "dropped from +0.80% to +0.10% (total .text: default -0.70%, learned +0.00%)");
  CHECK(reports::uplift_change_text(true, false, -0.007, 0.008, 0.001, 0.00001, -0.00001) ==
        "dropped from +0.80% to +0.10%");
  // In parts: the samples' own totals, inside their parentheses.
  CHECK(reports::uplift_change_text(true, true, -0.003, 0.05, 0.0495, reports::relative_move(1000, 950), 0) ==
        "dropped 0.30 points in parts (samples +5.00% → +4.95%; total .text: default -5.00%, learned +0.00%)");
  CHECK(reports::relative_move(0, 10) == 0);
  // A step inside that carries the samples' change whole leaves nothing.
  s = {{0.050, 1000, 950}, {0.050, 1000, 950}, {0.047, 1000, 953}, {0.047, 1000, 953}};
  found = steps_of(s, {true, false, false, true}, {0.002, 0});
  REQUIRE(found.size() == 1);
  CHECK_FALSE(found[0].spread);
}

TEST_CASE("steps are found between consecutive samples only: a drift of small steps across samples is none") {
  // 0.15 points a week, each week sampled: no step between two samples
  // reaches 0.2 (slow_drifts finds it).
  std::vector<Level> s;
  for (int week = 0; week < 8; ++week) s.push_back({0.05 - 0.0015 * week, 1000, 1000});
  CHECK(steps_of(s, std::vector<bool>(8, true), {0.002, 1}).empty());
  // A step that goes and comes back between two samples: both steps, where measured.
  std::vector<Level> t = {{0.05, 1000, 950}, {0.045, 1000, 955}, {0.05, 1000, 950}};
  auto found = steps_of(t, {true, false, true}, {0.002, 1});
  REQUIRE(found.size() == 2);
  CHECK(found[0].after == 1);
  CHECK(found[1].after == 2);
  CHECK(steps_of({{0.05, 1000, 950}}, {true}, {0.002, 1}).empty());
  CHECK(steps_of({}, {}, {0.002, 1}).empty());
}

namespace {

std::vector<reports::FoundStep> drifts_of(const std::vector<Level>& s, const std::vector<bool>& sample,
                                          reports::DriftThresholds t) {
  auto levels = [&](std::size_t a, std::size_t b) { return std::pair{s[a], s[b]}; };
  return reports::slow_drifts(sample, levels, reports::find_steps(sample, levels, t), t.min_uplift_change);
}

}  // namespace

TEST_CASE("a slow drift of the uplift across samples is found from where it started, each sample's move told once") {
  // 0.15 points a week for nine weeks, each week sampled: the move from week
  // 0 reaches 0.2 at week 2 (0.30), then from week 2 at week 4, and so on.
  std::vector<Level> s;
  for (int week = 0; week < 10; ++week) s.push_back({0.03 - 0.0015 * week, 1000, 1000 - week});
  auto found = drifts_of(s, std::vector<bool>(10, true), {0.002, 1});
  REQUIRE(found.size() == 4);
  for (std::size_t k = 0; k < found.size(); ++k) {
    CHECK(found[k].before == 2 * k);
    CHECK(found[k].after == 2 * k + 2);
    CHECK(found[k].spread);
    CHECK(found[k].across_samples);
    CHECK(found[k].change.uplift_moved);
    CHECK_FALSE(found[k].change.default_moved);
    CHECK(found[k].change.uplift_delta == doctest::Approx(-0.003));
  }
  // Check-ins bisection measured between samples are not references: from
  // sample 0 (+3.00%) to sample 3 (+2.85%) is 0.15 points, although the
  // check-in at 2 (+2.70%) lay 0.30 below.
  std::vector<Level> t = {{0.03, 1000, 970}, {0.0285, 1000, 970}, {0.027, 1000, 973}, {0.0285, 1000, 970}};
  CHECK(drifts_of(t, {true, false, false, true}, {0.002, 1}).empty());
  CHECK(drifts_of(t, {true, true, true, true}, {0.002, 1}).size() == 1);  // as samples, 0 → 2 is one
  // A rise then a fall back of the same size, each below the threshold, is no drift.
  std::vector<Level> u = {{0.03, 1000, 970}, {0.0315, 1000, 970}, {0.03, 1000, 970}, {0.0315, 1000, 970}};
  CHECK(drifts_of(u, std::vector<bool>(4, true), {0.002, 1}).empty());
  // A step resets the reference: the drift before it is its alert's, the one after starts there.
  std::vector<Level> v = {
      {0.03, 1000, 970}, {0.029, 1000, 971}, {0.02, 1000, 980}, {0.019, 1000, 981}, {0.0175, 1000, 982}};
  auto after_step = drifts_of(v, std::vector<bool>(5, true), {0.002, 1});
  REQUIRE(after_step.size() == 1);
  CHECK(after_step[0].before == 2);
  CHECK(after_step[0].after == 4);
  CHECK(after_step[0].change.uplift_delta == doctest::Approx(-0.0025));
  // Flat weeks before a drift are no part of its range: it starts at the
  // last sample from which the move still reaches the threshold (week 3).
  std::vector<Level> w = {{0.03, 1000, 970}, {0.03, 1000, 970},   {0.03, 1000, 970},
                          {0.03, 1000, 970}, {0.0285, 1000, 971}, {0.027, 1000, 973}};
  auto after_flat = drifts_of(w, std::vector<bool>(6, true), {0.002, 1});
  REQUIRE(after_flat.size() == 1);
  CHECK(after_flat[0].before == 3);
  CHECK(after_flat[0].after == 5);
  CHECK(after_flat[0].change.uplift_delta == doctest::Approx(-0.003));
  // Sample gaps in between are stepped over: week 3 is not a sample here, so week 2 begins it.
  auto gapped = drifts_of(w, {true, true, true, false, true, true}, {0.002, 1});
  REQUIRE(gapped.size() == 1);
  CHECK(gapped[0].before == 2);
  CHECK(drifts_of({}, {}, {0.002, 1}).empty());
  CHECK(drifts_of({{0.03, 1000, 970}}, {true}, {0.002, 1}).empty());
}

TEST_CASE("bisecting a change, a check-in is new once it is nearer the new level in the figure that moved") {
  Level old_level{0.050, 10000, 9500}, new_level{0.040, 10000, 9600};
  reports::DriftThresholds t{0.002, 0.002};
  // A small unrelated change earlier in the range is still the old level.
  CHECK(reports::midpoint_verdict({0.0495, 10000, 9505}, old_level, new_level, t) == reports::Verdict::Old);
  CHECK(reports::midpoint_verdict({0.041, 10000, 9590}, old_level, new_level, t) == reports::Verdict::New);
  CHECK(reports::midpoint_verdict(new_level, old_level, new_level, t) == reports::Verdict::New);
  // The uplift held; the default's total moved 2% and the learned one 1%: the default's decides.
  Level before{0.05, 10000, 9500}, after{0.05, 10200, 9595};
  CHECK(reports::midpoint_verdict({0.05, 10050, 9590}, before, after, t) == reports::Verdict::Old);
  CHECK(reports::midpoint_verdict({0.05, 10150, 9500}, before, after, t) == reports::Verdict::New);
  // The uplift moved below its threshold and neither total moved: the uplift
  // still decides (it once fell to the totals, which called everything new).
  Level flat{0.050, 1000, 950}, barely{0.0495, 1000, 950};
  CHECK(reports::midpoint_verdict(flat, flat, barely, t) == reports::Verdict::Old);
  CHECK(reports::midpoint_verdict(barely, flat, barely, t) == reports::Verdict::New);
  // Nothing moved at all: nothing to be nearer to.
  CHECK(reports::midpoint_verdict(flat, flat, flat, t) == reports::Verdict::Skip);
}

TEST_CASE("a step inside two samples carries of their change only its move over the modules both samples measured") {
  // Module M was first measured at check-in 1 (it failed at the first
  // sample); check-in 2 moved M alone, an uplift drop of 0.56 points over
  // the modules 1 and 2 measured. Over the samples' modules, without M,
  // neither the samples nor that step moved.
  std::vector<Level> with_m = {{0.050, 1000, 950}, {0.050, 1100, 1040}, {0.0444, 1100, 1045}, {0.0444, 1100, 1045}};
  Level without_m{0.050, 1000, 950};
  auto levels = [&](std::size_t a, std::size_t b) {
    return a == 0 ? std::pair{without_m, without_m} : std::pair{with_m[a], with_m[b]};
  };
  auto within = [&](std::size_t, std::size_t, std::size_t, std::size_t) { return std::pair{without_m, without_m}; };
  auto found = reports::find_steps({true, false, false, true}, levels, {0.002, 0.01}, within);
  REQUIRE(found.size() == 1);  // the drop, check-in 2's alone; nothing rose in parts
  CHECK_FALSE(found[0].spread);
  CHECK(found[0].after == 2);
  CHECK(found[0].change.uplift_delta == doctest::Approx(-0.0056));
  // Measured against each step's own modules, the drop left a rise of the same size "in parts".
  auto unmatched = reports::find_steps({true, false, false, true}, levels, {0.002, 0.01});
  REQUIRE(unmatched.size() == 2);
  CHECK(unmatched[1].spread);
  CHECK(unmatched[1].change.uplift_delta == doctest::Approx(0.0056));
}

TEST_CASE("modules newly failing in parts between two samples are found by module, not by count") {
  // Six evaluated check-ins, samples at 0 and 5 (bisection measured the
  // rest): A, B and C fail at 1 and come back at 2; X, Y and Z fail one at a
  // time at 3, 4 and 5. Threshold 3.
  std::vector<std::set<std::string>> failing = {{}, {"A", "B", "C"}, {}, {"X"}, {"X", "Y"}, {"X", "Y", "Z"}};
  std::vector<bool> sample = {true, false, false, false, false, true};
  auto newly = [&](std::size_t a, std::size_t b) {
    std::vector<std::string> out;
    std::set_difference(failing[b].begin(), failing[b].end(), failing[a].begin(), failing[a].end(),
                        std::back_inserter(out));
    return out;
  };
  auto steps = reports::failing_steps(sample, newly, 3);
  REQUIRE(steps.size() == 2);
  // A, B and C at check-in 1, exactly.
  CHECK(steps[0].before == 0);
  CHECK(steps[0].after == 1);
  CHECK_FALSE(steps[0].spread);
  // X, Y and Z over the range, none of whose steps names them: once their
  // count (3) less the inside step's count (3) left nothing, and no alert.
  CHECK(steps[1].before == 0);
  CHECK(steps[1].after == 5);
  CHECK(steps[1].spread);
  CHECK(steps[1].change.uplift_delta == 3);
  CHECK(steps[0].modules == std::vector<std::string>{"A", "B", "C"});
  CHECK(steps[1].modules == std::vector<std::string>{"X", "Y", "Z"});
  // A, B and C still failing at 5: the range's own modules are X, Y and Z,
  // not the six that fail at 5 and not at 0 (A, B and C are the first step's).
  failing = {{},
             {"A", "B", "C"},
             {"A", "B", "C"},
             {"A", "B", "C", "X"},
             {"A", "B", "C", "X", "Y"},
             {"A", "B", "C", "X", "Y", "Z"}};
  steps = reports::failing_steps(sample, newly, 3);
  REQUIRE(steps.size() == 2);
  CHECK(steps[1].spread);
  CHECK(steps[1].modules == std::vector<std::string>{"X", "Y", "Z"});
  CHECK(steps[1].change.uplift_delta == 3);
  // Modules the inside steps name are not counted again.
  failing = {{}, {"A", "B", "C"}, {"A", "B", "C"}, {"A", "B", "C", "X"}, {"A", "B", "C", "X"}, {"A", "B", "C", "X"}};
  steps = reports::failing_steps(sample, newly, 3);
  REQUIRE(steps.size() == 1);
  CHECK(steps[0].after == 1);
}

TEST_CASE("modules that begin failing a few a sample, each sample below the threshold, are a step once they reach it") {
  std::vector<std::set<std::string>> failing;
  auto newly = [&](std::size_t a, std::size_t b) {
    std::vector<std::string> out;
    std::set_difference(failing[b].begin(), failing[b].end(), failing[a].begin(), failing[a].end(),
                        std::back_inserter(out));
    return out;
  };
  std::vector<bool> samples(6, true);
  // A crash of a and b, fixed at 2, back one module a sample at 4 and 5:
  // the head fails on both again, with no two samples a step apart.
  failing = {{}, {"a", "b"}, {}, {}, {"a"}, {"a", "b"}};
  auto steps = reports::failing_steps(samples, newly, 2);
  REQUIRE(steps.size() == 2);
  CHECK(steps[0].before == 0);
  CHECK(steps[0].after == 1);
  CHECK_FALSE(steps[0].spread);
  CHECK(steps[1].before == 3);  // the last sample a compiled at
  CHECK(steps[1].after == 5);
  CHECK(steps[1].spread);
  CHECK(steps[1].across_samples);  // no check-in made it alone: nothing to bisect
  CHECK(steps[1].modules == std::vector<std::string>{"a", "b"});
  CHECK(steps[1].began == std::map<std::string, std::size_t>{{"a", 3}, {"b", 4}});
  // Each module from its own start: a, failing at 1 until 3, began again at 3.
  failing = {{}, {"a", "b"}, {"a", "x"}, {"x"}, {"a", "x"}, {"a", "x"}};
  steps = reports::failing_steps(samples, newly, 2);
  REQUIRE(steps.size() == 2);
  CHECK(steps[1].after == 4);
  CHECK(steps[1].began == std::map<std::string, std::size_t>{{"a", 3}, {"x", 1}});
  // A module a step between two samples named, compiling again by the next
  // sample, counts anew when it fails again.
  std::vector<bool> sparse = {true, false, true, true, true};
  failing = {{}, {"a", "b"}, {}, {"a"}, {"a", "b"}};
  steps = reports::failing_steps(sparse, newly, 2);
  REQUIRE(steps.size() == 2);
  CHECK(steps[0].after == 1);
  CHECK(steps[1].after == 4);
  CHECK(steps[1].modules == std::vector<std::string>{"a", "b"});
  // Spreading one module a sample: told at the third, at a threshold of three.
  failing = {{}, {"x"}, {"x", "y"}, {"x", "y", "z"}, {"x", "y", "z"}, {"x", "y", "z"}};
  steps = reports::failing_steps(samples, newly, 3);
  REQUIRE(steps.size() == 1);
  CHECK(steps[0].before == 0);
  CHECK(steps[0].after == 3);
  CHECK(steps[0].modules == std::vector<std::string>{"x", "y", "z"});
  // A module that compiles again leaves the count; one failing from the
  // first sample on is no new failure.
  failing = {{"w"}, {"w", "x"}, {"w"}, {"w", "y"}, {"w", "y", "z"}, {"w", "y", "z"}};
  CHECK(reports::failing_steps(samples, newly, 3).empty());
  // Modules a step names are not counted again.
  failing = {{}, {"x", "y", "z"}, {"x", "y", "z"}, {"x", "y", "z", "u"}, {"x", "y", "z", "u"}, {"x", "y", "z", "u"}};
  steps = reports::failing_steps(samples, newly, 3);
  REQUIRE(steps.size() == 1);
  CHECK(steps[0].after == 1);
  // Off the failing list is not compiling again: at 3, a's result was lost
  // (say the default failed on it too). It still counts from where it began,
  // with b and c joining: the range starts at 0, the last sample a compiled
  // at. Taken as compiling at 3, a would count from 3 and the range from 1.
  failing = {{}, {"a"}, {"a", "b"}, {"b"}, {"a", "b", "c"}, {"a", "b", "c"}};
  auto lost_at_3 = [&](std::size_t at, const std::string& m) {
    return !failing[at].count(m) && !(at == 3 && m == "a");
  };
  steps = reports::failing_steps(samples, newly, 3, lost_at_3);
  REQUIRE(steps.size() == 1);
  CHECK(steps[0].before == 0);
  CHECK(steps[0].after == 4);
  CHECK(steps[0].began == std::map<std::string, std::size_t>{{"a", 0}, {"b", 1}, {"c", 3}});
  steps = reports::failing_steps(samples, newly, 3);
  REQUIRE(steps.size() == 1);
  CHECK(steps[0].before == 1);
}

TEST_CASE("a spread range's flips leave out those a step inside it carries") {
  // Samples at 0 and 8: check-in 3 turned A-D from win to loss (its own
  // alert); the rest of the range moved sizes in parts and turned E.
  std::vector<reports::StepFlips> steps = {{2, 3, false, {"A", "B", "C", "D"}},
                                           {0, 8, true, {"A", "B", "C", "D", "E"}},
                                           {8, 9, false, {"F"}},
                                           {8, 12, true, {"F", "G"}}};
  reports::keep_spread_flips_own(steps);
  CHECK(steps[1].win_to_loss == std::vector<std::string>{"E"});
  CHECK(steps[3].win_to_loss == std::vector<std::string>{"G"});
  // Exact steps keep theirs; one outside a range takes nothing from it.
  CHECK(steps[0].win_to_loss.size() == 4);
  CHECK(steps[2].win_to_loss == std::vector<std::string>{"F"});
  // With 1 of them left, the remainder is no longer "modules-flipped" at a threshold of 3.
  reports::LevelChange sizes_only;
  CHECK(reports::change_kind(sizes_only, steps[1].win_to_loss.size(), 3) == "size-changed");
  CHECK(reports::change_kind(sizes_only, 5, 3) == "modules-flipped");
}

TEST_CASE("a change after which the compiler asked the policy nothing says so, and only then") {
  CHECK(reports::unasked_note(205, 0) ==
        " (the compiler asked the policy nothing there, 205 times before: it no longer consults it)");
  CHECK(reports::unasked_note(205, 3).empty());  // asked less: that is the code's doing
  CHECK(reports::unasked_note(0, 0).empty());    // never asked (no call sites): nothing stopped
  CHECK(reports::unasked_note(-1, 0).empty());   // not recorded before
  CHECK(reports::unasked_note(205, -1).empty());
}
