// The retraining rules on synthetic series, boundaries included, the
// refusal of rules that make no sense, and the candidate's verdict. Pure.
#include <doctest/doctest.h>

#include <cmath>

#include "reports/retraining.h"

using reports::RetrainPoint;
using reports::RetrainRules;
using reports::RetrainSeries;

namespace {

/// A series whose first point is the measured baseline.
RetrainSeries series(std::vector<double> uplifts) {
  RetrainSeries s;
  s.suite = "holdout";
  s.baseline_measured = true;
  s.baseline_is_training = true;
  for (std::size_t i = 0; i < uplifts.size(); ++i)
    s.points.push_back({"c" + std::to_string(i), uplifts[i], 1.0, 0, ""});
  return s;
}

/// Only the rule under test is on.
RetrainRules only(const char* rule) {
  RetrainRules r;
  r.fraction_on = std::string(rule) == "uplift_fraction";
  r.floor_on = std::string(rule) == "uplift_floor";
  r.no_worse_on = std::string(rule) == "no_worse";
  r.features_on = std::string(rule) == "features";
  r.age_on = std::string(rule) == "age";
  return r;
}

const reports::RuleOutcome& rule(const reports::SuiteDecision& d, const std::string& name) {
  for (const auto& r : d.rules)
    if (r.rule == name) return r;
  FAIL("no rule " << name);
  return d.rules.front();
}

}  // namespace

TEST_CASE("uplift_fraction compares each point with the baseline over the modules both measured") {
  auto r = only("uplift_fraction");
  r.min_fraction = 0.5;
  r.in_a_row = 1;
  // The point's own uplift fell to a third of the baseline's only because a
  // winning module failed there; over the modules both measured, nothing moved.
  auto s = series({0.006, 0.002});
  s.points[1].vs_baseline = std::pair{0.002, 0.002};
  CHECK_FALSE(rule(reports::decide(s, r), "uplift_fraction").fired);
  CHECK(rule(reports::decide(s, r), "uplift_fraction").measured == doctest::Approx(1.0));
  s.points[1].vs_baseline = std::pair{0.006, 0.002};  // a real loss over the same modules
  CHECK(rule(reports::decide(s, r), "uplift_fraction").fired);
}

TEST_CASE("uplift_fraction fires after K evaluated check-ins in a row below the fraction, not before") {
  auto r = only("uplift_fraction");
  r.min_fraction = 0.5;
  r.in_a_row = 2;
  // Baseline 2%, then 1.5%, 0.8%, 0.9%: the last two are below 1%.
  auto d = reports::decide(series({0.02, 0.015, 0.008, 0.009}), r);
  auto& o = rule(d, "uplift_fraction");
  CHECK(o.evaluated);
  CHECK(o.fired);
  CHECK(d.retrain);
  CHECK(o.measured == doctest::Approx(0.45));  // the best of the last two: 0.9% of 2%
  CHECK(o.threshold == doctest::Approx(0.5));
  CHECK(o.first == "c2");
  CHECK(o.last == "c3");
  CHECK(d.first == "c0");
  CHECK(d.last == "c3");
  // Only one below in a row: keep, saying the head is below already.
  d = reports::decide(series({0.02, 0.008, 0.015, 0.008}), r);
  CHECK_FALSE(rule(d, "uplift_fraction").fired);
  CHECK_FALSE(d.retrain);
  CHECK(rule(d, "uplift_fraction")
            .detail.find("; below it at the last 1 sampled check-in(s) (the head keeps 40.0% of its uplift): 1 "
                         "more in a row fire this rule") != std::string::npos);
  // A head above it says nothing of the sort.
  d = reports::decide(series({0.02, 0.008, 0.015}), r);
  CHECK(rule(d, "uplift_fraction").detail.find("below it at the last") == std::string::npos);
  // Exactly at the fraction is not below it.
  d = reports::decide(series({0.02, 0.01, 0.01}), r);
  CHECK(rule(d, "uplift_fraction").measured == doctest::Approx(0.5));
  CHECK_FALSE(rule(d, "uplift_fraction").fired);
  // K = 1 and a single point after the baseline.
  r.in_a_row = 1;
  CHECK(rule(reports::decide(series({0.02, 0.0099}), r), "uplift_fraction").fired);
}

TEST_CASE("uplift_fraction cannot say without a measured, positive baseline or with fewer than K points") {
  auto r = only("uplift_fraction");
  r.in_a_row = 3;
  auto o = rule(reports::decide(series({0.02, 0.0, 0.0}), r), "uplift_fraction");
  CHECK_FALSE(o.evaluated);
  CHECK_FALSE(o.fired);
  CHECK(o.detail == "2 sampled check-in(s) since the baseline, 3 needed");
  o = rule(reports::decide(series({-0.01, -0.05, -0.05, -0.05}), r), "uplift_fraction");
  CHECK_FALSE(o.fired);
  CHECK(o.detail.find("is not positive") != std::string::npos);
  auto s = series({0.02, 0.0, 0.0, 0.0});
  s.baseline_measured = false;
  o = rule(reports::decide(s, r), "uplift_fraction");
  CHECK_FALSE(o.fired);
  CHECK(o.detail.find("no baseline: neither the policy's training check-in nor any check-in after it") !=
        std::string::npos);
}

TEST_CASE("uplift_floor fires when the head's uplift is below the floor, not at it") {
  auto r = only("uplift_floor");
  r.min_uplift = 0;
  auto d = reports::decide(series({0.02, 0.01, -0.001}), r);
  CHECK(rule(d, "uplift_floor").fired);
  CHECK(rule(d, "uplift_floor").measured == doctest::Approx(-0.001));
  CHECK(rule(d, "uplift_floor").first == "c2");
  CHECK_FALSE(reports::decide(series({0.02, -0.01, 0.0}), r).retrain);  // at the floor; an earlier dip is history
  r.min_uplift = 0.005;
  CHECK(reports::decide(series({0.02, 0.0049}), r).retrain);
  CHECK_FALSE(rule(reports::decide(series({}), r), "uplift_floor").evaluated);
  // A policy below the floor from its baseline on (promoted because it beat
  // a worse one) is not retrained for being what it was, only once it falls.
  r.min_uplift = 0;
  auto promoted = reports::decide(series({-0.0033}), r);
  CHECK_FALSE(rule(promoted, "uplift_floor").fired);
  CHECK(rule(promoted, "uplift_floor").detail.find("no lower than the baseline's") != std::string::npos);
  CHECK_FALSE(reports::decide(series({-0.0033, -0.0020}), r).retrain);
  CHECK(reports::decide(series({-0.0033, -0.0040}), r).retrain);
  // Judged over the modules both measured: the head's own uplift reads above
  // the baseline's because its worst modules stopped compiling, while over
  // the modules both measured it fell.
  auto hidden = series({-0.0040, -0.0010});
  hidden.points[1].vs_baseline = std::pair{-0.0005, -0.0070};
  auto fell = reports::decide(hidden, r);
  CHECK(rule(fell, "uplift_floor").fired);
  hidden.points[1].vs_baseline = std::pair{-0.0005, -0.0003};
  auto held = rule(reports::decide(hidden, r), "uplift_floor");
  CHECK_FALSE(held.fired);
  CHECK(held.detail.find("no lower than the baseline's -0.05% (-0.03% over the modules both measured)") !=
        std::string::npos);
  // A baseline above the floor is never an excuse: its wins gone (their
  // modules failing at the head), what is left is no lower, and it fires.
  auto lost = series({0.004, -0.0025});
  lost.points[1].vs_baseline = std::pair{-0.003, -0.0025};
  CHECK(rule(reports::decide(lost, r), "uplift_floor").fired);
  // Trained off the tracked line, the baseline is only the first evaluated
  // check-in, which may have drifted already: the floor judges it.
  auto elsewhere = series({-0.0033});
  elsewhere.baseline_is_training = false;
  CHECK(rule(reports::decide(elsewhere, r), "uplift_floor").fired);
  auto unmeasured = series({-0.0033});
  unmeasured.baseline_measured = false;  // the first point is not the baseline: the floor alone judges
  CHECK(reports::decide(unmeasured, r).retrain);
  // A policy that tied the default at its training check-in (uplift 0, at
  // the floor) and is now a few bytes behind: less than min_uplift_change
  // below its baseline, noise, not a retraining.
  r.min_drop = 0.002;
  auto tied = rule(reports::decide(series({0.0, -0.00001}), r), "uplift_floor");
  CHECK_FALSE(tied.fired);
  CHECK(tied.detail ==
        "uplift -0.0010% at the head, below +0.00%, but only 0.001 points below the baseline's +0.00% "
        "(less than min_uplift_change, 0.2)");
  CHECK(rule(reports::decide(series({0.0, -0.0021}), r), "uplift_floor").fired);
  CHECK(rule(reports::decide(series({0.001, -0.0011}), r), "uplift_floor").fired);
  CHECK(rule(reports::decide(lost, r), "uplift_floor").fired);
  // Judged alone (the baseline not the training check-in), a head a few
  // bytes below the floor is a tie too; one below it by a change fires.
  auto noise = series({-0.00004});
  noise.baseline_is_training = false;
  auto alone = rule(reports::decide(noise, r), "uplift_floor");
  CHECK_FALSE(alone.fired);
  CHECK(alone.detail ==
        "uplift -0.0040% at the head, below +0.00%, but only 0.004 points below it (less than "
        "min_uplift_change, 0.2; the baseline is not the policy's training check-in)");
  CHECK(rule(reports::decide(elsewhere, r), "uplift_floor").fired);  // -0.33%: 0.33 points below
  // Modules it lost on failing at the head raise its own uplift there: over
  // the modules both measured it fell 0.4 points, and the rule fires.
  auto masked = series({0.0, -0.001});
  masked.points[1].vs_baseline = std::pair{0.003, -0.001};
  CHECK(rule(reports::decide(masked, r), "uplift_floor").fired);
}

TEST_CASE("no_worse fires when the share of modules no worse than the default falls below its floor") {
  auto r = only("no_worse");
  r.min_no_worse = 0.9;
  auto s = series({0.02, 0.02});
  s.points[1].no_worse = 0.89;
  CHECK(reports::decide(s, r).retrain);
  CHECK(rule(reports::decide(s, r), "no_worse").measured == doctest::Approx(0.89));
  s.points[1].no_worse = 0.9;
  CHECK_FALSE(reports::decide(s, r).retrain);
  r.min_no_worse = 1.0;
  s.points[1].no_worse = 1.0;
  CHECK_FALSE(reports::decide(s, r).retrain);
}

TEST_CASE("no_worse says when its share is over fewer modules than the suite's, the default failing on the others") {
  auto r = only("no_worse");
  r.min_no_worse = 0.9;
  auto s = series({0.02, 0.02});
  s.points[1].measured = 4;
  s.points[1].modules = 5;
  auto o = rule(reports::decide(s, r), "no_worse");
  CHECK_FALSE(o.fired);
  CHECK(o.detail.find("100.0% of modules no worse than the default at the head (over 4 of the suite's 5 modules: the "
                      "compiler's default failed on the others there)") != std::string::npos);
  s.points[1].measured = 5;
  CHECK(rule(reports::decide(s, r), "no_worse").detail.find("over ") == std::string::npos);
}

TEST_CASE("no_worse says which of its worse modules are compiles the policy's run failed, not sizes it lost") {
  auto r = only("no_worse");
  r.min_no_worse = 0.9;
  auto s = series({0.02, 0.02});
  s.points[1].no_worse = 6.0 / 11;
  s.points[1].measured = s.points[1].modules = 11;
  s.points[1].learned_failed = 5;
  auto o = rule(reports::decide(s, r), "no_worse");
  CHECK(o.fired);
  CHECK(o.detail.find("54.5% of modules no worse than the default at the head; 5 modules fail to compile with the "
                      "policy there, counted as worse (the compiler crashing or hanging, not the policy losing on "
                      "size)") != std::string::npos);
  s.points[1].learned_failed = 0;
  CHECK(rule(reports::decide(s, r), "no_worse").detail.find("fail to compile") == std::string::npos);
}

TEST_CASE("no_worse leaves a share the policy already had at its training check-in to the policy") {
  auto r = only("no_worse");
  r.min_no_worse = 0.9;
  auto s = series({0.02, 0.02});
  s.points[0].no_worse = 0.88;  // as trained
  s.points[1].no_worse = 0.88;
  auto o = rule(reports::decide(s, r), "no_worse");
  CHECK_FALSE(o.fired);
  CHECK(o.detail.find("no lower than the baseline's 88.0%") != std::string::npos);
  s.points.pop_back();  // the baseline alone: the head is the baseline
  CHECK_FALSE(reports::decide(s, r).retrain);
  s = series({0.02, 0.02});
  s.points[0].no_worse = 0.88;
  s.points[1].no_worse = 0.85;  // fell since
  CHECK(reports::decide(s, r).retrain);
  s.baseline_measured = false;  // no baseline to judge by: the floor alone
  s.points[1].no_worse = 0.88;
  CHECK(reports::decide(s, r).retrain);
}

TEST_CASE("uplift_fraction counts sampled check-ins in a row, not those bisection measured between two samples") {
  auto r = only("uplift_fraction");
  r.min_fraction = 0.5;
  r.in_a_row = 2;
  // The fall at c1, then bisection's c2 between samples c1 and c3, then c3 back up.
  auto s = series({0.02, 0.005, 0.005, 0.02});
  s.points[2].sample = false;
  s.points[3].uplift = 0.005;
  CHECK(reports::decide(s, r).retrain);  // c1 and c3: two samples in a row
  s.points[3].uplift = 0.02;
  auto o = rule(reports::decide(s, r), "uplift_fraction");
  CHECK_FALSE(o.fired);  // c1 and c2 would be two in a row; c2 is no sample
  s.points.pop_back();
  o = rule(reports::decide(s, r), "uplift_fraction");
  CHECK_FALSE(o.evaluated);
  CHECK(o.detail == "1 sampled check-in(s) since the baseline, 2 needed");
}

TEST_CASE("uplift_fraction does not act on a fall smaller than min_drop, however large a fraction it is") {
  auto r = only("uplift_fraction");
  r.min_fraction = 0.5;
  r.in_a_row = 1;
  r.min_drop = 0.002;
  auto o = rule(reports::decide(series({0.0004, 0.0001}), r), "uplift_fraction");  // a quarter, 0.03 points
  CHECK_FALSE(o.fired);
  CHECK(o.measured == doctest::Approx(0.25));
  CHECK(o.detail.find("fell only 0.03 points") != std::string::npos);
  CHECK(rule(reports::decide(series({0.004, 0.001}), r), "uplift_fraction").fired);  // 0.3 points
}

TEST_CASE("features fires when the head's compiler no longer sends a feature, from where it began") {
  auto r = only("features");
  auto s = series({0.02, 0.02, 0.02, 0.02});
  s.points[2].features_lost = s.points[3].features_lost = 1;
  s.points[3].features_note = "callee_users";
  auto d = reports::decide(s, r);
  auto& o = rule(d, "features");
  CHECK(o.fired);
  CHECK(o.measured == 1);
  CHECK(o.threshold == 0);
  CHECK(o.first == "c2");
  CHECK(o.last == "c3");
  CHECK(o.detail.find("callee_users") != std::string::npos);
  s.points[3].features_lost = 0;  // sent again at the head
  CHECK_FALSE(reports::decide(s, r).retrain);
}

TEST_CASE("features fires when the policy cannot run at all at the newest evaluated check-in") {
  auto r = only("features");
  auto s = series({0.02, 0.02});
  s.unusable_sha = "c2c2c2c2c2c2c2c2";
  s.unusable_error = "compatibility: 3 of 12 features missing";
  auto d = reports::decide(s, r);
  auto& o = rule(d, "features");
  CHECK(o.fired);
  CHECK(o.first == "c2c2c2c2c2c2c2c2");
  CHECK(d.last == "c2c2c2c2c2c2c2c2");
  CHECK(o.detail.find("cannot run at all") != std::string::npos);
  CHECK(o.detail.find("3 of 12 features missing") != std::string::npos);
  // With no check-in evaluated at all before it, it still says retrain.
  s.points.clear();
  CHECK(reports::decide(s, r).retrain);
  CHECK(reports::decide(s, r).first == "c2c2c2c2c2c2c2c2");
}

TEST_CASE("a head where the compiler asked the policy nothing keeps the policy although the rules fire") {
  auto r = only("uplift_floor");
  r.min_uplift = 0.0;
  // The uplift fell to a loss at the head; the compiler asked 40 times at
  // the baseline and not once at the head.
  auto s = series({0.01, -0.002});
  s.points[0].decisions = 40;
  s.points[1].decisions = 0;
  auto d = reports::decide(s, r);
  CHECK(rule(d, "uplift_floor").fired);
  CHECK_FALSE(d.retrain);
  CHECK(d.held.find("asked the policy nothing at the head c1 (40 times at c0)") != std::string::npos);
  // Asked at the head, however rarely: the rules decide.
  s.points[1].decisions = 1;
  d = reports::decide(s, r);
  CHECK(d.retrain);
  CHECK(d.held.empty());
  // Compiles that failed under the policy at the head: their decisions are
  // not counted, so nothing says it was not asked.
  s.points[1].decisions = 0;
  s.points[1].learned_failed = 3;
  CHECK(reports::decide(s, r).retrain);
  s.points[1].learned_failed = 0;
  // Counts not recorded (-1), or never asked at any point: the rules decide too.
  s.points[1].decisions = -1;
  CHECK(reports::decide(s, r).retrain);
  s.points[0].decisions = 0;
  s.points[1].decisions = 0;
  CHECK(reports::decide(s, r).retrain);
}

TEST_CASE("age is off by default and fires past either limit, not at it") {
  auto s = series({0.02, 0.02});
  s.age_checkins = 30;
  s.age_days = 90;
  CHECK_FALSE(rule(reports::decide(s, RetrainRules{}), "age").enabled);
  CHECK_FALSE(reports::decide(s, RetrainRules{}).retrain);
  auto r = only("age");
  r.max_age_checkins = 30;
  CHECK_FALSE(reports::decide(s, r).retrain);
  r.max_age_checkins = 29;
  CHECK(reports::decide(s, r).retrain);
  CHECK(rule(reports::decide(s, r), "age").measured == 30);
  r.max_age_checkins = 0;
  r.max_age_days = 90;
  CHECK_FALSE(reports::decide(s, r).retrain);
  r.max_age_days = 89;
  CHECK(reports::decide(s, r).retrain);
  CHECK(rule(reports::decide(s, r), "age").measured == doctest::Approx(90));
}

TEST_CASE("the default rules keep a steady policy and report every rule") {
  auto d = reports::decide(series({0.02, 0.019, 0.021}), RetrainRules{});
  CHECK_FALSE(d.retrain);
  REQUIRE(d.rules.size() == 5);
  for (const auto& o : d.rules) CHECK_FALSE(o.fired);
}

TEST_CASE("impossible or contradictory rules are refused naming the rule") {
  RetrainRules r;
  CHECK_FALSE(reports::validate(r));
  r.min_fraction = 1.5;
  CHECK(*reports::validate(r) == "rule 'uplift_fraction': min_fraction must be above 0 and at most 1, not 1.5");
  r.min_fraction = 0;
  CHECK(reports::validate(r)->rfind("rule 'uplift_fraction'", 0) == 0);
  r.min_fraction = 1;  // at most 1: allowed
  CHECK_FALSE(reports::validate(r));
  r.in_a_row = 0;
  CHECK(*reports::validate(r) == "rule 'uplift_fraction': in_a_row must be at least 1, not 0");
  r.fraction_on = false;  // thresholds of a rule that is off are not judged
  CHECK_FALSE(reports::validate(r));
  r.min_uplift = 1;
  CHECK(reports::validate(r)->rfind("rule 'uplift_floor'", 0) == 0);
  r.min_uplift = -0.05;
  r.min_no_worse = 0;
  CHECK(reports::validate(r)->rfind("rule 'no_worse'", 0) == 0);
  r.min_no_worse = 1.01;
  CHECK(reports::validate(r)->rfind("rule 'no_worse'", 0) == 0);
  r.min_no_worse = 0.9;
  r.age_on = true;
  CHECK(*reports::validate(r) == "rule 'age': it is on but neither max_age_checkins nor max_age_days is set");
  r.max_age_days = 30;
  CHECK_FALSE(reports::validate(r));
  RetrainRules none = only("nothing");
  CHECK(reports::validate(none)->find("every rule is off") != std::string::npos);
}

TEST_CASE("a candidate is promoted only when it wins by the margin without more losing modules than allowed") {
  reports::PromotionSettings s{0.001, 0};
  reports::HeldOutFigures active{0.010, 2, 10};
  CHECK(reports::judge_candidate(active, {0.012, 2, 10}, s).promote);
  CHECK(reports::judge_candidate({0.25, 2, 10}, {0.5, 2, 10}, {0.25, 0}).promote);  // exactly the margin
  auto v = reports::judge_candidate(active, {0.0109, 2, 10}, s);
  CHECK_FALSE(v.promote);
  CHECK(v.reason.rfind("does not win by the margin", 0) == 0);
  v = reports::judge_candidate(active, {0.02, 3, 10}, s);
  CHECK_FALSE(v.promote);
  CHECK(v.reason.rfind("makes 1 more module(s) worse", 0) == 0);
  s.max_extra_losing = 1;
  CHECK(reports::judge_candidate(active, {0.02, 3, 10}, s).promote);
  s.margin = 0;  // a margin of zero still needs a win
  CHECK_FALSE(reports::judge_candidate(active, active, s).promote);
  CHECK_FALSE(reports::judge_candidate(active, {std::nan(""), 0, 10}, s).promote);
}

TEST_CASE("a candidate that wins overall but falls behind on one held-out suite is not promoted") {
  reports::PromotionSettings s{0.001, 0};
  // Suite A: +0.5% → +1.5%; suite B: +0.5% → -0.2%. The mean rises by 0.15 points.
  reports::HeldOutFigures a_active{0.005, 4, 50}, a_candidate{0.015, 0, 50};
  reports::HeldOutFigures b_active{0.005, 4, 50}, b_candidate{-0.002, 8, 50};
  CHECK(reports::judge_candidate({0.005, 8, 100}, {0.0065, 8, 100}, s).promote);  // the mean alone would promote
  CHECK_FALSE(reports::suite_regression("A", a_active, a_candidate, s));
  auto why = reports::suite_regression("B", b_active, b_candidate, s);
  REQUIRE(why);
  CHECK(*why == "behind the active policy on B: -0.20% against +0.50%");
  // Level on a suite but with more losing modules there than allowed.
  why = reports::suite_regression("B", b_active, {0.005, 6, 50}, s);
  REQUIRE(why);
  CHECK(*why == "makes 2 more module(s) worse on B (6 against 4)");
  s.max_extra_losing = 2;
  CHECK_FALSE(reports::suite_regression("B", b_active, {0.005, 6, 50}, s));
  // What a retrain acts on: the overall win does not promote, and says why.
  s.max_extra_losing = 0;
  auto verdict = reports::judge_candidate_per_suite({0.005, 8, 100}, {0.0065, 8, 100},
                                                    {{"A", a_active, a_candidate}, {"B", b_active, b_candidate}}, s);
  CHECK_FALSE(verdict.promote);
  CHECK(verdict.reason.rfind("behind the active policy on B: -0.20% against +0.50%; overall wins by the margin", 0) == 0);
  // Ahead on each suite: promoted, with the overall reason alone.
  verdict = reports::judge_candidate_per_suite({0.005, 8, 100}, {0.0065, 8, 100},
                                               {{"A", a_active, a_candidate}, {"B", b_active, {0.006, 4, 50}}}, s);
  CHECK(verdict.promote);
  CHECK(verdict.reason.rfind("wins by the margin", 0) == 0);
}

TEST_CASE("a candidate that wins only because its compile breaks the active policy's best module is not promoted") {
  // The active policy wins big on A and loses on B; the candidate breaks A
  // and ties B. Over the modules both measured (A left out of both), the
  // candidate reads ahead, and its losing modules are as many (A failed, B lost).
  reports::PromotionSettings s{0.001, 0};
  reports::HeldOutFigures active{-0.0015, 1, 96, 0}, candidate{0.0, 1, 96, 1};
  auto v = reports::judge_candidate(active, candidate, s);
  CHECK_FALSE(v.promote);
  CHECK(v.reason.find("breaks the compile of 1 more module(s) than the active policy (1 against 0") == 0);
  // Per suite too.
  auto why = reports::suite_regression("holdout", active, candidate, s);
  REQUIRE(why);
  CHECK(why->find("breaks the compile of 1 more module(s) on holdout") == 0);
  // Breaking no more than the active policy does, it is judged on its figures.
  candidate.failed = 0;
  CHECK(reports::judge_candidate(active, candidate, s).promote);
}

TEST_CASE("a rule's figures read as people say them") {
  CHECK(reports::rule_figure("no_worse", "share", 0.959) == "95.9%");
  CHECK(reports::rule_figure("uplift_fraction", "share", 0.5) == "50.0%");
  CHECK(reports::rule_figure("uplift_floor", "uplift", 0.0082) == "+0.82%");
  CHECK(reports::rule_figure("age", "days", 30.7) == "30 days");
  // Beside its threshold, as many decimals as tell the two apart.
  using Pair = std::pair<std::string, std::string>;
  CHECK(reports::rule_figures("no_worse", "share", 0.8996, 0.9) == Pair{"89.96%", "90.00%"});
  CHECK(reports::rule_figures("uplift_floor", "uplift", -0.00001, 0) == Pair{"-0.001%", "+0.000%"});
  CHECK(reports::rule_figures("age", "days", 30.4, 30) == Pair{"30.4 days", "30.0 days"});
  CHECK(reports::rule_figures("no_worse", "share", 0.9, 0.9) == Pair{"90.0%", "90.0%"});
  CHECK(reports::rule_figures("no_worse", "share", 0.5, 0.9) == Pair{"50.0%", "90.0%"});
  CHECK(reports::rule_figure("age", "check-ins", 12) == "12 check-ins");
  CHECK(reports::rule_figure("features", "features", 2) == "2");
  // A decision stored before the unit was: read by its rule.
  CHECK(reports::rule_figure("no_worse", "", 0.9) == "90.0%");
  CHECK(reports::rule_figure("uplift_floor", "", -0.001) == "-0.10%");
  CHECK(reports::rule_figure("age", "", 30) == "30");
}

TEST_CASE("every rule says the unit of its figures") {
  auto s = series({0.02, 0.01});
  RetrainRules r = only("");
  r.age_on = r.features_on = r.floor_on = r.no_worse_on = r.fraction_on = true;
  r.max_age_days = 365;
  auto d = reports::decide(s, r);
  CHECK(d.rules.size() == 5);
  for (const auto& o : d.rules) {
    INFO(o.rule);
    CHECK_FALSE(o.unit.empty());
  }
}
