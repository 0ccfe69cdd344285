#pragma once
// From a recorded series to the changes worth an alert: where the suite
// uplift or either total size moved between consecutive evaluated check-ins
// (or between two samples, in parts), what kind of change it is, and which
// side of it a check-in between lies on (the bisection verdicts). Pure:
// values in, values out.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "evaluator/uplift.h"
#include "reports/bisection.h"

namespace reports {

/// What one evaluated check-in measured on a suite.
struct Level {
  double uplift = 0;  ///< 1 - geometric mean of learned/default
  std::int64_t total_default = 0, total_learned = 0;
};

struct DriftThresholds {
  double min_uplift_change = 0.002;  ///< absolute, on the uplift (0.002 = 0.2 points)
  double min_total_change = 0.002;   ///< relative, on either total
};

/// A change between series[index - 1] and series[index].
struct LevelChange {
  std::size_t index = 0;
  bool uplift_moved = false, default_moved = false, learned_moved = false;
  double uplift_delta = 0;          ///< after - before
  double default_delta = 0, learned_delta = 0;  ///< relative: after / before - 1
};

/// Every step at or above a threshold between consecutive levels. Sizes are
/// deterministic: any step is real, the thresholds decide what is worth an alert.
std::vector<LevelChange> level_changes(const std::vector<Level>& series, const DriftThresholds& thresholds);

/// A change found in a series of evaluated check-ins (indices into it).
struct FoundStep {
  std::size_t before = 0, after = 0;  ///< consecutive, unless spread
  LevelChange change;                 ///< from before to after
  /// Between two samples, with check-ins bisection measured in between, none
  /// of whose steps crosses the threshold alone: the change was made in parts.
  bool spread = false;
  /// failing_steps: the modules the step carries (sorted): those newly
  /// failing, and for a spread one only those no step inside it names.
  std::vector<std::string> modules;
  /// slow_drifts: spread over several samples, each sample-to-sample move
  /// below the threshold. Nothing to bisect: no check-in made it alone.
  /// failing_steps: modules that began failing a few a sample, likewise.
  bool across_samples = false;
  /// failing_steps, across samples: where each module's failure began (the
  /// last sample it compiled at), which may differ from module to module.
  std::map<std::string, std::size_t> began;
};

/// A found step's range and the modules it turned from win to loss.
struct StepFlips {
  std::size_t before = 0, after = 0;
  bool spread = false;
  std::vector<std::string> win_to_loss;
};

/// Takes from each spread step's win_to_loss the modules an exact step inside
/// its range turned: that step's alert says them, and counted again they
/// would make the spread remainder read as "modules-flipped".
void keep_spread_flips_own(std::vector<StepFlips>& steps);

/// The levels of two evaluated check-ins (by index), compared over what both measured.
using CompareLevels = std::function<std::pair<Level, Level>(std::size_t before, std::size_t after)>;

/// Every change worth an alert in a series of evaluated check-ins (`sample`:
/// which of them the sweep's grid sampled; the others bisection measured):
/// each step between consecutive ones at or above a threshold, and, between
/// consecutive samples, what of their change the steps inside do not carry
/// (per figure: the samples' delta less the inside steps' moves in that
/// figure) where that is at or above a threshold. Bisection measures a change
/// made in several commits in parts; compared only with their neighbours,
/// the parts stay below the threshold and the change the samples showed would
/// never be reported. A spread change's deltas are that rest. Ordered by end.
/// `within`, when given, compares a step inside two samples over only the
/// modules both samples measured (before, after, first sample, second
/// sample): the steps' moves are then taken from the samples' change over
/// the same modules. A module first measured between them moves a step
/// inside but not the samples' change, and the difference read as a change
/// in parts in the other direction.
using CompareLevelsWithin =
    std::function<std::pair<Level, Level>(std::size_t before, std::size_t after, std::size_t from, std::size_t to)>;
std::vector<FoundStep> find_steps(const std::vector<bool>& sample, const CompareLevels& levels,
                                  const DriftThresholds& thresholds, const CompareLevelsWithin& within = {});

/// The uplift's slow drifts across samples, which find_steps (samples
/// compared with their neighbours only) never sees: 0.15 points a week for
/// nine weeks is 1.35 points lost with no step of 0.2. From a reference
/// sample (the first; then the end of each drift, or the first sample at or
/// after an uplift step of `steps`, whose alert says the move before it),
/// the uplift's move to each later sample, once it is at or above
/// min_uplift_change, is a drift (spread, across_samples), from the last
/// sample whose move to it still reaches that (the flat samples before are
/// no part of it). Later samples are judged from its end, so each sample's
/// move is told once. Only the uplift: the totals grow with the compiler's own work.
std::vector<FoundStep> slow_drifts(const std::vector<bool>& sample, const CompareLevels& levels,
                                   const std::vector<FoundStep>& steps, double min_uplift_change);

/// The modules the policy's compile fails on at `after` and did not at `before` (indices of evaluated check-ins).
using NewlyFailing = std::function<std::vector<std::string>(std::size_t before, std::size_t after)>;
/// Where the policy's compile began to fail on modules, as find_steps finds
/// level changes: between consecutive evaluated check-ins where at least
/// `threshold` modules newly fail, and between consecutive samples where the
/// modules newly failing from one to the other, less those the steps inside
/// name, still reach it (a change bisection measured in parts); and at the
/// sample where modules that began failing a few a sample, none named by a
/// step, reach it (a spread step from the last sample the earliest of them
/// compiled at). By module,
/// not by count: modules that failed and came back between the samples are
/// no failure left, and so no part of one. A step's uplift_delta is its count.
/// `compiles_at` (index, module), when given: whether a module is known to
/// compile there; one off the failing list that is not (the default failed
/// too, the machine lost the result) stays counted from where it began.
using CompilesAt = std::function<bool(std::size_t at, const std::string& module)>;
std::vector<FoundStep> failing_steps(const std::vector<bool>& sample, const NewlyFailing& newly_failing, int threshold,
                                     const CompilesAt& compiles_at = {});

/// Said of an alert pinned to a range, not one check-in: those between were
/// never tried (no bisection for that kind, or it was off), or did not build.
inline constexpr const char* kRangeNote = "only the last of them was evaluated";
/// Said of a range over which the level moved in several steps, each below
/// the threshold: no single check-in made the change.
inline constexpr const char* kSpreadNote = "spread over several check-ins, each step below the threshold";
/// Said of a range that reaches back to where a module failing since was
/// last measured: its change may lie anywhere after that measurement.
inline constexpr const char* kCarriedNote = "a module failing in between was last measured at the last good one";
inline const char* range_note(bool spread, bool carried = false) {
  return spread ? kSpreadNote : carried ? kCarriedNote : kRangeNote;
}
/// Said where a finding has neither culprit nor range: the first measured
/// check-in already had it, so no earlier one is known good.
inline constexpr const char* kNotPinnedNote = "the first check-in measured; none before it is known good";
/// Said of a change after which the compiler asked the policy nothing (it
/// still opens the channel, so the evaluation did not fail; every module
/// ties): " (the compiler asked the policy nothing there, N times before: …)",
/// or "" (decision counts of -1: not recorded).
std::string unasked_note(std::int64_t decisions_before, std::int64_t decisions_after);

/// Two check-ins' levels over the modules both measured. A module that
/// failed to compile at one of them (a timeout, a crash) must not move a
/// total or the uplift: that would be a size change nobody made.
struct ComparedLevels {
  Level before, after;
  std::vector<std::string> only_before, only_after;  ///< left out: measured on one side only, by name
};
ComparedLevels compare_levels(const std::vector<evaluator::ModuleSizes>& before,
                              const std::vector<evaluator::ModuleSizes>& after);

/// A module a point could not measure, taken from where it last was.
struct CarriedSize {
  evaluator::ModuleSizes size;
  std::size_t measured_at = 0;  ///< the position of that measurement
};

/// One point with the modules it could not measure filled in.
struct FilledPoint {
  std::vector<evaluator::ModuleSizes> sizes;  ///< measured and filled in, by name
  std::map<std::string, CarriedSize> carried;  ///< the filled-in ones, and where each was measured
};

/// Each point's modules (`series`, at `positions`), with those it could not
/// measure (a timeout or a crash there) taken from the last earlier point
/// that measured them. Compared this way, a module that fails at one sample
/// and comes back changed still shows its change at the sample it came back
/// at; compared only where both sides measured it, it would be left out of
/// both steps and never seen.
std::vector<FilledPoint> carried_forward(const std::vector<std::vector<evaluator::ModuleSizes>>& series,
                                         const std::vector<std::size_t>& positions);

/// Of a change spread over consecutive evaluated points (`points`, the
/// first and the last its two samples), the first and the last index
/// between which any module's size moved: points equal to their neighbour
/// at either end (a docs-only check-in, a compiler byte-identical to the
/// one before) are no part of the range people are sent to. (0, size - 1)
/// when nothing moved.
std::pair<std::size_t, std::size_t> moving_span(const std::vector<const FilledPoint*>& points);

/// Where a change from the point at `before` to a later one may have begun:
/// a module carried at `before` that the later point measured with other
/// sizes may have changed anywhere after its last measurement, so the
/// earliest such measurement; `before` when there is none. `moved` gets
/// their names.
std::size_t change_reaches_back_to(std::size_t before, const std::map<std::string, CarriedSize>& carried,
                                   const std::vector<evaluator::ModuleSizes>& after_measured,
                                   std::vector<std::string>* moved);

/// Bisection's verdict for a check-in between `old_level` and a later change:
/// Old while every figure is exactly the old one (sizes are deterministic, so
/// any difference means the check-in already has a change).
Verdict verdict_against(const Level& value, const Level& old_level);

/// Bisection's verdict for a check-in between the levels on either side of
/// a change: Old while it is nearer the old level than the new one in the
/// figure that moved most against its threshold (the uplift when it crossed
/// its own), as asv's `find` judges; Skip when the two levels are the same. Unlike "any
/// difference from the old level", a small unrelated change earlier in the
/// range does not send the search to it: one search pins the step.
Verdict midpoint_verdict(const Level& value, const Level& old_level, const Level& new_level,
                         const DriftThresholds& thresholds);

/// The alert kind of a change: uplift-dropped, uplift-rose, modules-flipped
/// (when the uplift held but at least `flip_threshold` modules turned from win
/// to loss), or size-changed.
std::string change_kind(const LevelChange& change, std::size_t win_to_loss, int flip_threshold);

/// How an uplift change reads: "dropped from +1.00% to +0.70%"; or, spread,
/// what the steps inside left of the samples' change (`rest`, after - before),
/// beside the samples' levels, which include those steps and may have moved
/// the other way: "dropped 0.30 points in parts (samples +1.00% → +1.05%)".
/// With the totals' own moves between the two levels (relative_move), which
/// say whether the policy's code grew or the default's shrank, appended as
/// " (total .text: default -0.70%, learned +0.02%)" unless both read 0.00%
/// (spread: inside the samples' parentheses).
/// after / before - 1; 0 where there was nothing before.
double relative_move(double before, double after);
std::string uplift_change_text(bool dropped, bool spread, double rest, double before, double after,
                               double default_delta = 0, double learned_delta = 0);

}  // namespace reports
