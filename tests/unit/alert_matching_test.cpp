#include "sweep/alert_matching.h"

#include <doctest/doctest.h>

using sweep::FoundAt;

namespace {

/// Positions 0..9 on first-parent history: check-in "cN" at N.
std::map<std::string, std::size_t> line() {
  std::map<std::string, std::size_t> out;
  for (std::size_t i = 0; i < 10; ++i) out["c" + std::to_string(i)] = i;
  return out;
}

/// An open alert left as the range c<lo> .. c<hi> (no culprit).
db::AlertView range_alert(db::Id id, const std::string& kind, int lo, int hi) {
  db::AlertView v;
  v.id = id;
  v.kind = kind;
  v.policy_hash = "P";
  v.suite_manifest_hash = "S";
  v.recipe_hash = "R";
  v.fingerprint = kind + "|c" + std::to_string(lo) + "..c" + std::to_string(hi);
  v.range_first_sha = "c" + std::to_string(lo);
  v.first_bad_sha = "c" + std::to_string(hi);
  return v;
}

FoundAt pinned(const std::string& kind, int at) {
  return {kind, "P", "S", "R", kind + "|c" + std::to_string(at), "c" + std::to_string(at), "", "c" + std::to_string(at)};
}

}  // namespace

TEST_CASE("a finding inside an open range alert of its kind and series narrows that alert") {
  std::vector<db::AlertView> open{range_alert(1, "uplift-dropped", 3, 7), range_alert(2, "size-changed", 3, 7)};
  CHECK(sweep::narrowed_alert(open, pinned("uplift-dropped", 5), {}, line()) == db::Id{1});
  CHECK(sweep::narrowed_alert(open, pinned("size-changed", 7), {}, line()) == db::Id{2});
  // Outside the range, another series, or the very same alert: nothing to narrow.
  CHECK_FALSE(sweep::narrowed_alert(open, pinned("uplift-dropped", 8), {}, line()));
  auto other = pinned("uplift-dropped", 5);
  other.suite_hash = "S2";
  CHECK_FALSE(sweep::narrowed_alert(open, other, {}, line()));
  // Another recipe's builds are another series too; an alert whose recipe
  // was never recorded (opened before it was) is every recipe's.
  auto recipe = pinned("uplift-dropped", 5);
  recipe.recipe_hash = "R2";
  CHECK_FALSE(sweep::narrowed_alert(open, recipe, {}, line()));
  auto unrecorded = open;
  unrecorded[0].recipe_hash.clear();
  CHECK(sweep::narrowed_alert(unrecorded, recipe, {}, line()) == db::Id{1});
  FoundAt same{"uplift-dropped", "P", "S", "R", open[0].fingerprint, "", "c3", "c7"};
  CHECK_FALSE(sweep::narrowed_alert(open, same, {}, line()));
  // An alert with a culprit is exact already.
  auto exact = range_alert(3, "modules-flipped", 3, 7);
  exact.culprit_sha = "c7";
  CHECK_FALSE(sweep::narrowed_alert({exact}, pinned("modules-flipped", 5), {}, line()));
}

TEST_CASE("a range alert whose own change is found again is not narrowed into another change inside its range") {
  // A size change over 1..4 (a module back from failing, changed) and a
  // separate size change pinned at 2: both found again by a later sweep.
  auto wide = range_alert(1, "size-changed", 1, 4);
  auto inside = pinned("size-changed", 2);
  std::set<std::string> now{wide.fingerprint, inside.fingerprint};
  CHECK_FALSE(sweep::narrowed_alert({wide}, inside, now, line()));
  // The exact alert exists already: nothing to narrow either way.
  db::AlertView exact;
  exact.id = 2;
  exact.kind = "size-changed";
  exact.policy_hash = "P";
  exact.suite_manifest_hash = "S";
  exact.fingerprint = inside.fingerprint;
  exact.culprit_sha = "c2";
  CHECK_FALSE(sweep::narrowed_alert({wide, exact}, inside, {inside.fingerprint}, line()));
  // The wide change no longer found: the pinned one is what it was.
  CHECK(sweep::narrowed_alert({wide}, inside, {inside.fingerprint}, line()) == db::Id{1});
}

TEST_CASE("a range alert whose range now holds only other findings is superseded, one still found is not") {
  std::vector<db::AlertView> open{range_alert(1, "uplift-dropped", 3, 7), range_alert(2, "size-changed", 0, 2)};
  // Bisection pinned what lay in 3..7 as a size change at 5: the uplift alert is done.
  std::vector<FoundAt> found{pinned("size-changed", 5)};
  CHECK(sweep::superseded_alerts(open, "P", "S", "R", found, line()) == std::vector<db::Id>{1});
  // Still found as the same range: it stays.
  found.push_back({"uplift-dropped", "P", "S", "R", open[0].fingerprint, "", "c3", "c7"});
  CHECK(sweep::superseded_alerts(open, "P", "S", "R", found, line()).empty());
  // Another policy's or another recipe's alerts are never touched.
  CHECK(sweep::superseded_alerts(open, "P2", "S", "R", {pinned("size-changed", 5)}, line()).empty());
  CHECK(sweep::superseded_alerts(open, "P", "S", "R2", {pinned("size-changed", 5)}, line()).empty());
}

TEST_CASE(
    "a compiler-wide change alerted under one suite, or a broken build under one policy, is found alerted in the other "
    "series, in any state") {
  db::AlertView v;
  v.kind = "build-broken";
  v.policy_hash = "P";
  v.suite_manifest_hash = "S1";
  v.recipe_hash = "R";
  v.state = "resolved";
  v.fingerprint = sweep::alert_fingerprint("proj", "P", "S1", "R", "c4");
  FoundAt under_s2{"build-broken", "P", "S2", "R", sweep::alert_fingerprint("proj", "P", "S2", "R", "c4"),
                   "c4",           "",  "c4"};
  CHECK(sweep::alerted_in_another_series({v}, "proj", under_s2, "c4"));
  // Another change, kind or recipe is another alert.
  CHECK_FALSE(sweep::alerted_in_another_series({v}, "proj", under_s2, "c5"));
  auto other = under_s2;
  other.kind = "feature-set-changed";
  CHECK_FALSE(sweep::alerted_in_another_series({v}, "proj", other, "c4"));
  // A broken build is no policy's: alerted under the one replaced, it is alerted.
  other = under_s2;
  other.policy_hash = "Q";
  CHECK(sweep::alerted_in_another_series({v}, "proj", other, "c4"));
  other.suite_hash = "S1";
  CHECK(sweep::alerted_in_another_series({v}, "proj", other, "c4"));
  // A changed feature set is read by a policy: another policy's alert is not its.
  auto features = v;
  features.kind = "feature-set-changed";
  features.fingerprint = sweep::alert_fingerprint("proj", "P", "S1", "R", "c4");
  other.kind = "feature-set-changed";
  CHECK_FALSE(sweep::alerted_in_another_series({features}, "proj", other, "c4"));
  other.policy_hash = "P";
  other.suite_hash = "S2";
  CHECK(sweep::alerted_in_another_series({features}, "proj", other, "c4"));
  other = under_s2;
  other.recipe_hash = "R2";
  CHECK_FALSE(sweep::alerted_in_another_series({v}, "proj", other, "c4"));
  // Its own suite's alert is not "another suite's": narrowing and opening handle that.
  auto same = under_s2;
  same.suite_hash = "S1";
  CHECK_FALSE(sweep::alerted_in_another_series({v}, "proj", same, "c4"));
  // Another project's alert of the same shape is not this project's.
  CHECK_FALSE(sweep::alerted_in_another_series({v}, "other", under_s2, "c4"));
}

TEST_CASE(
    "an alert pinned to nothing (the policy unusable from the first check-in measured) is narrowed by the same change, "
    "pinned later") {
  db::AlertView v;
  v.id = 4;
  v.kind = "policy-unusable";
  v.policy_hash = "P";
  v.suite_manifest_hash = "S";
  v.recipe_hash = "R";
  v.fingerprint = "policy-unusable|from c5";
  v.first_bad_sha = "c5";
  // Earlier check-ins measured since: pinned, or left as a range, ending at c5.
  CHECK(sweep::narrowed_alert({v}, pinned("policy-unusable", 5), {}, line()) == db::Id{4});
  FoundAt range{"policy-unusable", "P", "S", "R", "policy-unusable|c2..c5", "", "c2", "c5"};
  CHECK(sweep::narrowed_alert({v}, range, {}, line()) == db::Id{4});
  // Another first_bad is another change; the same not-pinned finding is the alert itself.
  CHECK_FALSE(sweep::narrowed_alert({v}, pinned("policy-unusable", 6), {}, line()));
  FoundAt again{"policy-unusable", "P", "S", "R", v.fingerprint, "", "", "c5"};
  CHECK_FALSE(sweep::narrowed_alert({v}, again, {}, line()));
}
