#pragma once
// After a sweep: read each suite's series back, find where the uplift or
// either total moved, bisect every change between sampled check-ins down to
// one check-in (evaluating first-parent check-ins between them as ordinary
// jobs), record the series and open one alert per change, deduplicated
// across sweeps; then deliver what is pending to the hook and webhook.
#include <map>
#include <string>
#include <vector>

#include "db/database.h"
#include "reports/drift.h"
#include "sweep/notify.h"
#include "sweep/progress.h"
#include "sweep/project_file.h"
#include "sweep/worker.h"

namespace sweep {

/// One change of one suite's series, pinned to a check-in or a range.
struct Finding {
  std::string suite;
  /// uplift-dropped, uplift-rose, size-changed, modules-flipped, modules-failing, compiler-failing,
  /// feature-set-changed, build-broken, policy-unusable
  std::string kind;
  std::string last_good;   ///< the evaluated check-in before the change
  std::string first_bad;   ///< the first evaluated check-in with it
  std::string culprit;     ///< the check-in that made it, when known exactly
  std::string range_first; ///< else: the culprit is one of range_first .. first_bad (broken builds between)
  /// A spread change between samples: its samples' range, which names its
  /// alert while its own range is narrowed to the check-ins that moved (a
  /// later measurement inside may move those ends; the change, and its
  /// alert, stay the same).
  std::string samples_range;
  std::string subject, author;
  /// The toolchains' labels of last_good, first_bad and range_first (a
  /// commit's are not needed: it is named by its sha).
  std::string last_good_label, first_bad_label, range_first_label;
  std::int64_t time = 0;
  reports::Level before, after;
  reports::LevelChange change;
  std::vector<std::string> win_to_loss, loss_to_win;
  std::vector<std::string> most_affected;                   ///< reports::ModuleMove::text, largest moves first
  std::vector<std::string> features_missing, features_new;  ///< for feature-set-changed
  /// For modules-failing: how many more modules the policy's compile fails
  /// on than at last_good, and those no longer measured there, by name; for
  /// compiler-failing, the same of the compiler's own (default) compiles.
  int newly_failing = 0;
  std::vector<std::string> failing;
  std::string evaluation_error;  ///< for policy-unusable: why the policy could not run at first_bad
  /// For build-broken: the sampled check-ins in a row that did not build,
  /// which made it an alert (the project's alerts.broken_builds). Said as
  /// such: a fix built later does not make "stayed broken" untrue.
  int broken_samples = 0;
  /// For the failures that can end (timeline's recovers()): the first
  /// check-in after first_bad, evaluated or built, that no longer shows it
  /// (the build builds, the policy runs, every one of `failing` compiles);
  /// "" while it is still seen. Its alert is resolved, saying so.
  std::string recovered_at, recovered_at_label;
  /// Of `failing`, those failing again at recovered_at from a later
  /// check-in on: a later alert's, which this one's end does not claim.
  int recovered_taken = 0;
  /// The policy's answers over the suite at last_good and first_bad (-1:
  /// not recorded). A compiler that still opens the channel but asks
  /// nothing reads as ties everywhere: the sentence says so.
  std::int64_t decisions_before = -1, decisions_after = -1;
  /// Modules measured at only one of the two sides and never before it:
  /// left out of `before` and `after`.
  std::vector<std::string> not_compared;
  /// Modules that failed at `last_good` and were compared at their last
  /// measured size there ("name (measured at <sha>)"). Their change may lie
  /// anywhere after that measurement, so the range starts there too.
  std::vector<std::string> carried;
  int range_size = 0;    ///< first-parent check-ins strictly between the two samples it was found between
  int evaluations = 0;   ///< check-ins bisection evaluated for it
  /// The level moved past the threshold over several check-ins of the range,
  /// each step below it (a slow drift, or a change made in parts).
  bool spread = false;
  /// A slow drift over several samples (reports::slow_drifts): never bisected.
  bool across_samples = false;
  bool new_alert = false;
  std::string details_json() const;
  /// "uplift on holdout dropped from +1.70% to +0.40%: 1a2b3c4d5e6f [Inliner] Raise …"
  std::string sentence() const;
};

struct DriftReport {
  bool analysed = false;  ///< false: no analysis ran (toolchains only, no history to order)
  std::vector<Finding> findings;
  int bisect_evaluations = 0;  ///< check-ins bisection evaluated (a failed whole evaluation included)
  /// Check-ins bisection tried that gave no evaluation (no build, a broken
  /// compiler): said apart, not counted as evaluated.
  int bisect_unevaluated = 0;
  /// The most evaluated check-ins any suite has: 0 means there was nothing
  /// to analyse, which "no change" must not be taken for.
  std::size_t evaluated_checkins = 0;
  /// Each analysed suite's evaluated check-ins: a suite with fewer than two
  /// can show no change, whatever the others show.
  std::map<std::string, std::size_t> evaluated_by_suite;
  std::vector<db::Id> job_ids;  ///< the jobs bisection enqueued
  int alerts_opened = 0;        ///< new alerts of changes still there: news, sent where a channel is configured
  /// New alerts of failures a later check-in already shows over (a year
  /// swept at once): recorded and resolved at once, not sent, and not
  /// counted among the new ones a reader must act on.
  int alerts_found_over = 0;
  /// Alerts of earlier runs resolved because a later check-in no longer
  /// shows their cause (Finding::recovered_at).
  int alerts_recovered = 0;
  Delivery notifications;  ///< of the pending alerts, this one's included
};

struct DriftOptions {
  ProjectFile project;
  LocalWorkers workers;  ///< how bisection's evaluations run
  bool bisect = true;
  /// The check-ins the project's grid samples over its whole range: only
  /// they count towards `alerts.broken_builds` (bisection's check-ins inside
  /// one broken week are no samples). Empty: every measured check-in counts.
  std::vector<std::string> samples;
  /// The sweep bisection works for (0: none, `bisect` alone): its jobs carry
  /// it, so `jobs cancel --sweep S` reaches them too.
  db::Id sweep_id = 0;
  /// `bisect --good A --bad B`: only changes between these two check-ins
  /// (full shas) are bisected; a project kept at `bisect = false` for its
  /// cost asked for one range, not every one. Empty: every change.
  std::string bisect_from, bisect_to;
};

/// Analyses every suite of the project (repository check-ins only).
DriftReport analyse_drift(const DriftOptions& options, db::Database& db);

}  // namespace sweep
