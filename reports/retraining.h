#pragma once
// Should the frozen policy be retrained? Rules over a suite's series (the
// uplift at each evaluated check-in since the baseline, the share of modules
// no worse than the default, the compiler's feature set, the policy's age),
// each switched on or off with its thresholds; and whether a retrained
// candidate beats the active policy on held-out code. Pure: values in, values out.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace reports {

/// One evaluated check-in of a suite's series, in first-parent order.
struct RetrainPoint {
  std::string sha;
  double uplift = 0;          ///< 1 - geometric mean of learned/default
  double no_worse = 1;        ///< share of modules the policy left no larger than the default
  int features_lost = 0;      ///< policy features the compiler no longer sends, or sends unusable (reshaped)
  std::string features_note;  ///< which, for people
  /// The baseline's uplift and this point's over the modules both measured
  /// (one that failed at either moves no fraction); unset for the baseline.
  std::optional<std::pair<double, double>> vs_baseline;
  /// One of the project's sampled check-ins; false for one only bisection
  /// measured between two samples, which "K in a row" does not count (K
  /// check-ins inside one week would not show that a loss persists).
  bool sample = true;
  /// How many times the compiler asked the policy over the evaluation's
  /// learned compiles; -1 when not recorded.
  std::int64_t decisions = -1;
  /// Modules whose compile under the policy failed (their decisions are not
  /// in `decisions`: no decision count is kept of a failed compile).
  int learned_failed = 0;
  /// The modules `no_worse` is over (their default compiled there; the
  /// policy's failures count as worse), and the suite's: fewer when the
  /// compiler's default failed on some. 0 when not known.
  int measured = 0, modules = 0;
};

struct RetrainSeries {
  std::string suite;
  std::vector<RetrainPoint> points;  ///< the baseline first (when measured), then every later evaluated check-in
  /// points[0] is the baseline: the policy's training check-in, or (one
  /// trained off the tracked line) the first evaluated check-in.
  bool baseline_measured = false;
  /// The baseline is the training check-in itself: only then is the
  /// policy's level there how it was made (the floor and no-worse rules
  /// spare a head no lower than it); a first evaluated check-in elsewhere
  /// may already have drifted.
  bool baseline_is_training = false;
  int age_checkins = 0;              ///< first-parent check-ins from the baseline to the head
  /// The newest check-in evaluated, when its evaluation failed as a whole
  /// (the policy cannot run there; it is not in `points`), and why.
  std::string unusable_sha, unusable_error;
  double age_days = 0;
};

/// The rules and their thresholds; each can be switched off.
struct RetrainRules {
  bool fraction_on = true;
  double min_fraction = 0.5;  ///< of the baseline's uplift, for `in_a_row` check-ins in a row
  int in_a_row = 2;
  /// The least fall of the uplift (absolute; the alerts' min_uplift_change)
  /// the fraction rule acts on: of a baseline of +0.04%, a fall to +0.01% is
  /// a quarter but no change worth retraining for.
  double min_drop = 0;
  bool floor_on = true;
  double min_uplift = 0.0;  ///< absolute: below 0 the learned heuristic loses to the default
  bool no_worse_on = true;
  double min_no_worse = 0.9;  ///< share of modules no worse than the default
  bool features_on = true;    ///< the compiler stopped sending (or reshaped) features the policy uses
  bool age_on = false;
  int max_age_checkins = 0;  ///< 0 = not checked
  int max_age_days = 0;      ///< 0 = not checked
};

/// One line naming the rule at fault ("rule 'uplift_fraction': min_fraction
/// must be above 0 and at most 1, not 1.5"), or nothing when the rules make sense.
std::optional<std::string> validate(const RetrainRules& rules);

struct RuleOutcome {
  std::string rule;  ///< uplift_fraction, uplift_floor, no_worse, features, age
  bool enabled = false;
  bool evaluated = false;  ///< false when the series cannot say (too short, no baseline)
  bool fired = false;
  double measured = 0;
  double threshold = 0;
  std::string first, last;  ///< the check-ins the evidence covers
  std::string detail;       ///< one sentence, for people
  std::string unit;         ///< of measured and threshold: share, uplift, features, days, check-ins
};

/// A rule's measured value or threshold as people read it: a share or an
/// uplift in per cent ("82.0%", "+0.82%"), an age with its unit ("30 days").
/// `unit` as in RuleOutcome; a decision stored without one is read by its rule.
std::string rule_figure(const std::string& rule, const std::string& unit, double value);
/// A measured value and its threshold, with the decimals that tell them
/// apart when they differ ("89.96%" and "90.00%", not "90.0%" twice).
std::pair<std::string, std::string> rule_figures(const std::string& rule, const std::string& unit, double measured,
                                                 double threshold);

struct SuiteDecision {
  std::string suite;
  std::vector<RuleOutcome> rules;
  std::string first, last;  ///< what the series covers: the baseline (or first point) to the head
  bool retrain = false;
  /// Why rules that fired do not call for a retrain (the compiler no longer
  /// asks the policy anything at the head), or "".
  std::string held;
};

/// Applies every rule to one suite's series. Assumes validate() passed.
SuiteDecision decide(const RetrainSeries& series, const RetrainRules& rules);

/// What a policy measured on the held-out suites at one build.
struct HeldOutFigures {
  double uplift = 0;  ///< mean over the suites of their geometric-mean uplift
  int losses = 0;     ///< modules made larger than the default, over the suites
  int modules = 0;
  /// Modules the default compiled and the policy's compile broke (a crash, a
  /// hang; counted in `losses` too). The uplifts are compared over the
  /// modules both policies measured, so a module only one of them broke
  /// leaves both figures: without this count, a candidate could win by
  /// breaking the compile of the active policy's best module.
  int failed = 0;
};

struct PromotionSettings {
  double margin = 0.001;     ///< the candidate's uplift must exceed the active's by at least this
  int max_extra_losing = 0;  ///< modules made worse, beyond the active's count
};

struct CandidateVerdict {
  bool promote = false;
  std::string reason;  ///< why, with the figures
};

/// Promote only a candidate that wins by the margin without adding more
/// losing modules than allowed, nor breaking more compiles than the active.
CandidateVerdict judge_candidate(const HeldOutFigures& active, const HeldOutFigures& candidate,
                                 const PromotionSettings& s);

/// Each held-out suite on its own: why the candidate may not be promoted
/// although it wins overall (it is behind the active policy on this suite,
/// or adds more losing modules here than allowed), or nothing. A mean over
/// suites, or a net count of losing modules, would hide one suite's loss.
std::optional<std::string> suite_regression(const std::string& suite, const HeldOutFigures& active,
                                            const HeldOutFigures& candidate, const PromotionSettings& s);

/// One held-out suite's figures of both policies.
struct SuiteFigures {
  std::string suite;
  HeldOutFigures active, candidate;
};

/// The verdict a retrain acts on: judge_candidate over the suites together,
/// then, if that promotes, each suite's suite_regression (the first found
/// stops the promotion and leads the reason).
CandidateVerdict judge_candidate_per_suite(const HeldOutFigures& active, const HeldOutFigures& candidate,
                                           const std::vector<SuiteFigures>& suites, const PromotionSettings& s);

}  // namespace reports
