#include "reports/retraining.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/text.h"

namespace reports {

namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

/// Points of uplift, to three significant digits: 0.184914 reads 0.185.
std::string points(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string rule_error(const char* rule, const std::string& what) {
  return "rule '" + std::string(rule) + "': " + what;
}

RuleOutcome outcome(const char* rule, bool enabled) {
  RuleOutcome o;
  o.rule = rule;
  o.enabled = enabled;
  return o;
}

/// The points after the baseline: what the rules judge.
std::vector<RetrainPoint> after_baseline(const RetrainSeries& s) {
  if (s.points.empty()) return {};
  return {s.points.begin() + (s.baseline_measured ? 1 : 0), s.points.end()};
}

RuleOutcome fraction_rule(const RetrainSeries& s, const RetrainRules& r) {
  RuleOutcome o = outcome("uplift_fraction", r.fraction_on);
  o.unit = "share";
  o.threshold = r.min_fraction;
  if (!r.fraction_on) return o;
  auto later = after_baseline(s);
  if (!s.baseline_measured) {
    o.detail =
        "no baseline: neither the policy's training check-in nor any check-in after it was evaluated on this suite";
    return o;
  }
  double base = s.points.front().uplift;
  if (base <= 0) {
    o.detail =
        "the baseline's uplift " + common::signed_percent(base) + " is not positive: a fraction of it means nothing";
    return o;
  }
  std::vector<RetrainPoint> samples;
  for (const auto& p : later)
    if (p.sample) samples.push_back(p);
  if (static_cast<int>(samples.size()) < r.in_a_row) {
    o.detail = std::to_string(samples.size()) + " sampled check-in(s) since the baseline, " +
               std::to_string(r.in_a_row) + " needed";
    return o;
  }
  // The best of the last K samples: every one of them is below the bar when
  // it is; and the least fall among them, which must be worth acting on too.
  std::vector<RetrainPoint> last(samples.end() - r.in_a_row, samples.end());
  auto fraction = [&](const RetrainPoint& p) {
    bool compared = p.vs_baseline && p.vs_baseline->first > 0;
    return compared ? p.vs_baseline->second / p.vs_baseline->first : p.uplift / base;
  };
  auto drop = [&](const RetrainPoint& p) {
    bool compared = p.vs_baseline && p.vs_baseline->first > 0;
    return compared ? p.vs_baseline->first - p.vs_baseline->second : base - p.uplift;
  };
  double best = -1e300, least_drop = 1e300;
  for (const auto& p : last) {
    best = std::max(best, fraction(p));
    least_drop = std::min(least_drop, drop(p));
  }
  o.evaluated = true;
  o.measured = best;
  bool below = best < r.min_fraction;
  bool small = below && least_drop < r.min_drop;
  o.fired = below && !small;
  o.first = last.front().sha;
  o.last = last.back().sha;
  o.detail = "the last " + std::to_string(r.in_a_row) + " sampled check-in(s) kept at most " +
             rule_figure(o.rule, o.unit, best) + " of the baseline's uplift " + common::signed_percent(base) +
             " (each over the modules it and the baseline measured)" + (below ? ", below " : ", not below ") +
             rule_figure(o.rule, o.unit, r.min_fraction);
  if (small)
    o.detail += ", but the uplift fell only " + points(100 * least_drop) + " points (less than " +
                num(100 * r.min_drop) + ", the alerts' min_uplift_change)";
  // Kept only because the loss is not K samples old yet: said, or "keep"
  // beside a head whose uplift is gone reads as all being well.
  if (!o.fired) {
    int trailing = 0;
    for (auto it = samples.rbegin(); it != samples.rend() && fraction(*it) < r.min_fraction && drop(*it) >= r.min_drop;
         ++it)
      ++trailing;
    if (trailing > 0)
      o.detail += "; below it at the last " + std::to_string(trailing) + " sampled check-in(s) (the head keeps " +
                  rule_figure(o.rule, o.unit, fraction(samples.back())) +
                  " of its uplift): " + std::to_string(r.in_a_row - trailing) + " more in a row fire this rule";
  }
  return o;
}

/// A rule on the head check-in alone: fires when `value` there is below
/// `threshold`; `describe(value)` says what was measured.
template <typename Value, typename Describe>
RuleOutcome head_below_rule(const char* name, bool on, double threshold, const RetrainSeries& s, Value value,
                            Describe describe, const std::string& threshold_text) {
  RuleOutcome o = outcome(name, on);
  o.threshold = threshold;
  if (!on || s.points.empty()) return o;
  const auto& head = s.points.back();
  o.evaluated = true;
  o.measured = value(head);
  o.fired = o.measured < threshold;
  o.first = o.last = head.sha;
  o.detail = describe(o.measured) + (o.fired ? ", below " : ", not below ") + threshold_text;
  return o;
}

/// An uplift beside the floor: two decimals, more where two would print
/// them alike ("+0.00% at the head, below +0.00%" would say nothing).
std::string uplift_beside(double v, double floor) {
  auto text = common::signed_percent(v);
  if (v == floor || text != common::signed_percent(floor)) return text;
  text = fmt::format("{:+.4f}%", 100 * v);
  return text == "-0.0000%" ? "+0.0000%" : text;
}

RuleOutcome floor_rule(const RetrainSeries& s, const RetrainRules& r) {
  auto o = head_below_rule(
      "uplift_floor", r.floor_on, r.min_uplift, s, [](const auto& p) { return p.uplift; },
      [&r](double v) { return "uplift " + uplift_beside(v, r.min_uplift) + " at the head"; },
      common::signed_percent(r.min_uplift));
  o.unit = "uplift";
  // A policy promoted below the floor (it beat a worse one) would otherwise
  // be retrained every night at the check-in it was just trained at: the
  // floor is for an uplift that fell since.
  // Judged over the modules both measured: modules that stopped compiling
  // under the policy at the head (its worst losses, say) leave its own
  // uplift, which can then read above the baseline's while it fell.
  // Only a baseline below the floor itself: one above it that the head fell
  // under is what the rule is for, whatever the modules both measured say.
  if (!o.fired || !s.baseline_measured) return o;
  if (!s.baseline_is_training) {
    // The head is judged alone (the first evaluated check-in may have
    // drifted already), but a head a few bytes below the floor is a tie, as
    // for a policy that tied the default where it was trained: it must lie
    // below the floor by a change the alerts call a change.
    if (double below = r.min_uplift - o.measured; below < r.min_drop) {
      o.fired = false;
      o.detail += ", but only " + points(100 * below) + " points below it (less than min_uplift_change, " +
                  num(100 * r.min_drop) + "; the baseline is not the policy's training check-in)";
    }
    return o;
  }
  const auto& vs = s.points.back().vs_baseline;
  double base = vs ? vs->first : s.points.front().uplift, head = vs ? vs->second : o.measured;
  std::string both = vs ? " (" + common::signed_percent(head) + " over the modules both measured)" : std::string();
  if (s.points.front().uplift < r.min_uplift && head >= base) {
    o.fired = false;
    o.detail += ", but no lower than the baseline's " + common::signed_percent(base) + both;
  } else if (double fall = std::max(s.points.front().uplift - o.measured, vs ? base - head : -1.0);
             fall < r.min_drop) {
    // The larger of the fall of each side's own uplift and of the fall over
    // the modules both measured: modules failing at the head hide a fall from
    // one or the other, whichever side of the default they were on.
    // A policy that ties the default at its training check-in (uplift 0, the
    // floor 0) would be retrained for a module a few bytes larger: a fall
    // smaller than a change the alerts call a change is noise here too.
    o.fired = false;
    o.detail += ", but only " + points(100 * fall) + " points below the baseline's " +
                common::signed_percent(s.points.front().uplift) + " (less than min_uplift_change, " +
                num(100 * r.min_drop) + ")";
  }
  return o;
}

RuleOutcome no_worse_rule(const RetrainSeries& s, const RetrainRules& r) {
  auto o = head_below_rule(
      "no_worse", r.no_worse_on, r.min_no_worse, s, [](const auto& p) { return p.no_worse; },
      [&s](double v) {
        char share[64];
        std::snprintf(share, sizeof share, "%.1f%% of modules no worse than the default at the head", 100 * v);
        // Modules the compiler's own default fails on are in no share: said,
        // or a suite shrunk by a crash reads as a policy at 100%.
        const auto& head = s.points.back();
        std::string out = share;
        if (head.measured > 0 && head.modules > head.measured)
          out += " (over " + std::to_string(head.measured) + " of the suite's " + std::to_string(head.modules) +
                 " modules: the compiler's default failed on the others there)";
        // A compile the policy's run crashed counts as worse, but it is the
        // compiler's failure, which a retrained policy may meet too: said,
        // so that the advice is not read as a policy that lost on size.
        if (head.learned_failed > 0)
          out += "; " + std::to_string(head.learned_failed) +
                 (head.learned_failed == 1 ? " module fails" : " modules fail") +
                 " to compile with the policy there, counted as worse (the compiler crashing or hanging, not the "
                 "policy losing on size)";
        return out;
      },
      num(100 * r.min_no_worse) + "%");
  o.unit = "share";
  // A share the policy had already at its training check-in is how it was
  // made, not drift: retraining is for a share that fell since.
  if (o.fired && s.baseline_measured && s.baseline_is_training && o.measured >= s.points.front().no_worse) {
    o.fired = false;
    char was[96];
    std::snprintf(was, sizeof was, ", but no lower than the baseline's %.1f%%", 100 * s.points.front().no_worse);
    o.detail += was;
  }
  return o;
}

RuleOutcome features_rule(const RetrainSeries& s, const RetrainRules& r) {
  RuleOutcome o = outcome("features", r.features_on);
  o.unit = "features";
  o.threshold = 0;
  if (!r.features_on) return o;
  if (!s.unusable_sha.empty()) {
    o.evaluated = o.fired = true;
    o.first = o.last = s.unusable_sha;
    o.detail = "the policy cannot run at all at the newest evaluated check-in " + s.unusable_sha.substr(0, 12) + ": " +
               s.unusable_error;
    return o;
  }
  if (s.points.empty()) return o;
  const auto& head = s.points.back();
  o.evaluated = true;
  o.measured = head.features_lost;
  o.fired = head.features_lost > 0;
  o.last = head.sha;
  // The evidence starts where the loss began: the first of the trailing points with it.
  o.first = head.sha;
  for (auto it = s.points.rbegin(); it != s.points.rend() && it->features_lost > 0; ++it) o.first = it->sha;
  o.detail = o.fired ? std::to_string(head.features_lost) +
                           " feature(s) the policy uses are no longer sent, or sent "
                           "unusable: " +
                           head.features_note
                     : "every feature the policy uses is sent";
  return o;
}

RuleOutcome age_rule(const RetrainSeries& s, const RetrainRules& r) {
  RuleOutcome o = outcome("age", r.age_on);
  if (!r.age_on) return o;
  o.evaluated = true;
  bool by_checkins = r.max_age_checkins > 0 && s.age_checkins > r.max_age_checkins;
  bool by_days = r.max_age_days > 0 && s.age_days > r.max_age_days;
  // The measure reported is the one that fired, else the check-ins when they are limited.
  bool days = by_days || (!by_checkins && r.max_age_checkins == 0);
  o.unit = days ? "days" : "check-ins";
  o.measured = days ? s.age_days : s.age_checkins;
  o.threshold = days ? r.max_age_days : r.max_age_checkins;
  o.fired = by_checkins || by_days;
  if (!s.points.empty()) o.first = s.points.front().sha, o.last = s.points.back().sha;
  o.detail = "the policy is " + std::to_string(s.age_checkins) + " check-in(s) and " + num(std::floor(s.age_days)) +
             " day(s) old (at most " + (r.max_age_checkins > 0 ? std::to_string(r.max_age_checkins) : "-") +
             " check-ins, " + (r.max_age_days > 0 ? std::to_string(r.max_age_days) : "-") + " days)";
  return o;
}

}  // namespace

namespace {

/// `value` in `unit` at `extra` more decimals than people are shown first.
std::string figure_at(const std::string& u, double value, int extra) {
  if (u == "share") return fmt::format("{:.{}f}%", 100 * value, 1 + extra);
  if (u == "uplift") {
    if (extra == 0) return common::signed_percent(value);
    auto text = fmt::format("{:+.{}f}%", 100 * value, 2 + extra);
    return text.starts_with("-") && text.find_first_not_of("-0.%") == std::string::npos ? "+" + text.substr(1) : text;
  }
  // Whole days as people count an age (30.7 days old is 30 days old).
  if (u == "days") return extra == 0 ? num(std::floor(value)) + " days" : fmt::format("{:.{}f} days", value, extra);
  if (u == "check-ins") return num(value) + " check-ins";
  return num(value);
}

std::string unit_of(const std::string& rule, const std::string& unit) {
  if (!unit.empty()) return unit;
  if (rule == "uplift_fraction" || rule == "no_worse") return "share";
  if (rule == "uplift_floor") return "uplift";
  return "";
}

}  // namespace

std::string rule_figure(const std::string& rule, const std::string& unit, double value) {
  return figure_at(unit_of(rule, unit), value, 0);
}

std::pair<std::string, std::string> rule_figures(const std::string& rule, const std::string& unit, double measured,
                                                 double threshold) {
  // A measure that fired beside a threshold that reads the same ("90.0%
  // below 90.0%") says nothing: more decimals, until they differ.
  auto u = unit_of(rule, unit);
  for (int extra = 0;; ++extra) {
    auto m = figure_at(u, measured, extra), t = figure_at(u, threshold, extra);
    if (m != t || measured == threshold || extra == 4) return {m, t};
  }
}

std::optional<std::string> validate(const RetrainRules& r) {
  if (r.fraction_on && !(r.min_fraction > 0 && r.min_fraction <= 1))
    return rule_error("uplift_fraction", "min_fraction must be above 0 and at most 1, not " + num(r.min_fraction));
  if (r.fraction_on && r.in_a_row < 1)
    return rule_error("uplift_fraction", "in_a_row must be at least 1, not " + std::to_string(r.in_a_row));
  if (r.floor_on && !(r.min_uplift > -1 && r.min_uplift < 1))
    return rule_error("uplift_floor",
                      "min_uplift must lie between -1 and 1 (an uplift is a fraction), not " + num(r.min_uplift));
  if (r.no_worse_on && !(r.min_no_worse > 0 && r.min_no_worse <= 1))
    return rule_error("no_worse", "min_no_worse must be above 0 and at most 1, not " + num(r.min_no_worse));
  if (r.age_on && r.max_age_checkins <= 0 && r.max_age_days <= 0)
    return rule_error("age", "it is on but neither max_age_checkins nor max_age_days is set");
  if (r.max_age_checkins < 0 || r.max_age_days < 0) return rule_error("age", "the maximum age cannot be negative");
  if (!r.fraction_on && !r.floor_on && !r.no_worse_on && !r.features_on && !r.age_on)
    return std::string("every rule is off: decide would always keep the policy (turn one on in [decide])");
  return std::nullopt;
}

SuiteDecision decide(const RetrainSeries& s, const RetrainRules& r) {
  SuiteDecision d;
  d.suite = s.suite;
  d.rules = {fraction_rule(s, r), floor_rule(s, r), no_worse_rule(s, r), features_rule(s, r), age_rule(s, r)};
  if (!s.points.empty()) d.first = s.points.front().sha, d.last = s.points.back().sha;
  if (!s.unusable_sha.empty()) d.last = s.unusable_sha;
  if (d.first.empty()) d.first = d.last;
  for (const auto& o : d.rules) d.retrain = d.retrain || o.fired;
  // A compiler that still opens the channel but asks the policy nothing at
  // the head moves the uplift to a tie, which the rules read as drift; a
  // retrained policy would not be asked either, so hours of training there
  // could not help: the change to act on is the compiler's (the drift alert
  // names it). A policy that cannot run at all is the features rule's case.
  // Only with no compile failed under the policy there: a failed compile's
  // decisions are not counted, so a policy that crashed wherever it was
  // asked would read as not asked.
  if (d.retrain && s.unusable_sha.empty() && !s.points.empty() && s.points.back().decisions == 0 &&
      s.points.back().learned_failed == 0) {
    auto asked = std::find_if(s.points.rbegin(), s.points.rend(), [](const auto& p) { return p.decisions > 0; });
    if (asked != s.points.rend()) {
      d.retrain = false;
      d.held = "the compiler asked the policy nothing at the head " + s.points.back().sha.substr(0, 12) + " (" +
               std::to_string(asked->decisions) + " times at " + asked->sha.substr(0, 12) +
               "): a retrained policy would not be asked either; the change to act on is the compiler's (see "
               "`driftwatch alerts`)";
    }
  }
  return d;
}

CandidateVerdict judge_candidate(const HeldOutFigures& a, const HeldOutFigures& c, const PromotionSettings& s) {
  double gain = c.uplift - a.uplift;
  int extra = c.losses - a.losses;
  std::string figures = "candidate " + common::signed_percent(c.uplift) + " against active " +
                        common::signed_percent(a.uplift) + " (" + (gain >= 0 ? "+" : "") + num(100 * gain) +
                        " points; margin " + num(100 * s.margin) + " points); losing modules " +
                        std::to_string(c.losses) + " against " + std::to_string(a.losses) + " (at most " +
                        std::to_string(s.max_extra_losing) + " more allowed)";
  if (!std::isfinite(c.uplift)) return {false, "the candidate's uplift is not a number: " + figures};
  if (c.failed > a.failed)
    return {false, "breaks the compile of " + std::to_string(c.failed - a.failed) +
                       " more module(s) than the active policy (" + std::to_string(c.failed) + " against " +
                       std::to_string(a.failed) + "; those modules are left out of both uplifts): " + figures};
  if (!(gain > 0 && gain >= s.margin)) return {false, "does not win by the margin: " + figures};
  if (extra > s.max_extra_losing)
    return {false, "makes " + std::to_string(extra) + " more module(s) worse: " + figures};
  return {true, "wins by the margin: " + figures};
}

std::optional<std::string> suite_regression(const std::string& suite, const HeldOutFigures& a,
                                            const HeldOutFigures& c, const PromotionSettings& s) {
  if (c.uplift < a.uplift)
    return "behind the active policy on " + suite + ": " + common::signed_percent(c.uplift) + " against " +
           common::signed_percent(a.uplift);
  if (c.losses - a.losses > s.max_extra_losing)
    return "makes " + std::to_string(c.losses - a.losses) + " more module(s) worse on " + suite + " (" +
           std::to_string(c.losses) + " against " + std::to_string(a.losses) + ")";
  if (c.failed > a.failed)
    return "breaks the compile of " + std::to_string(c.failed - a.failed) + " more module(s) on " + suite + " (" +
           std::to_string(c.failed) + " against " + std::to_string(a.failed) + ")";
  return std::nullopt;
}

CandidateVerdict judge_candidate_per_suite(const HeldOutFigures& active, const HeldOutFigures& candidate,
                                           const std::vector<SuiteFigures>& suites, const PromotionSettings& s) {
  auto verdict = judge_candidate(active, candidate, s);
  if (!verdict.promote) return verdict;
  for (const auto& f : suites)
    if (auto why = suite_regression(f.suite, f.active, f.candidate, s))
      return {false, *why + "; overall " + verdict.reason};
  return verdict;
}

}  // namespace reports
