#pragma once
// Everything a drift report shows, as plain values: the project, its policy
// and lineage, the baseline, each suite's series with per-module ratios, the
// alerts with their states, build failures, feature-set changes and
// retraining decisions. sweep/report assembles it from the database; the
// renderers (reports/render.h) turn it into JSON, Markdown and HTML.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace reports {

/// One check-in as people see it.
struct CommitRef {
  std::string sha, author, subject;
  std::int64_t time = 0;  ///< committer time, seconds since the epoch
};

/// One entry of the active policy's lineage: itself first, then the
/// project's other policies newest first (from the database), or what its
/// file says it was warm-started from (without one).
struct LineageEntry {
  std::string name, content_hash;
  std::string trained_at;  ///< the compiler check-in it was trained at
  std::string created;     ///< ISO 8601 UTC
  std::string note;        ///< e.g. "active", "parent (file not at hand)"
};

struct PolicyInfo {
  std::string name, content_hash, path;
  std::string trained_at;  ///< check-in sha the policy was trained at
  std::string corpus, created;
  std::vector<LineageEntry> lineage;  ///< the active policy first
  /// From the database (the project's policies, newest first); else from the
  /// policy file, where the second entry is the one it was warm-started from.
  bool lineage_recorded = false;
};

/// One check-in of a suite's series (first-parent order).
struct ReportPoint {
  CommitRef commit;
  int position = 0;           ///< index in first-parent history, oldest first
  std::string build_outcome;  ///< ok, build-failed, …
  bool evaluated = false;
  double uplift = 0, total_uplift = 0;
  std::int64_t total_default = 0, total_learned = 0;
  int wins = 0, ties = 0, losses = 0;
  /// Modules measured under both heuristics: the figures above are over
  /// these. Fewer than the suite's (a timeout, a crash here) and the totals
  /// dip by what was not measured, a move nobody made: the page says so.
  int measured = 0;
  /// Modules the default compiled and the policy's compile broke (crash,
  /// hang): losses the sizes cannot show, as they have no learned size.
  int learned_failed = 0;
  /// Not evaluated with a build that is ok: why the policy could not run here.
  std::string evaluation_error;
  /// learned/default .text per module, aligned with SuiteSeries::modules; empty when not evaluated; < 0 when
  /// unmeasured.
  std::vector<double> ratios;
};

struct SuiteSeries {
  std::string name, manifest_hash;
  std::vector<std::string> modules;  ///< sorted
  std::vector<ReportPoint> points;   ///< evaluated check-ins and failed builds, oldest first
  std::size_t evaluated() const;     ///< how many points were evaluated
};

struct AlertEventEntry {
  std::string state, who, note, at;
};

struct ReportAlert {
  long long id = 0;
  std::string kind, state, state_by, note, suite;
  std::string sentence;  ///< one line for people
  CommitRef culprit;     ///< empty sha when only a range is known
  std::string last_good, first_bad, range_first;
  bool spread = false;  ///< the range is a change made in several smaller steps
  bool carried = false;  ///< the range reaches back to where a module failing since was last measured
  double magnitude = 0;
  double uplift_before = 0, uplift_after = 0;
  std::vector<std::string> most_affected, win_to_loss, loss_to_win, features_missing, features_new;
  std::vector<std::string> failing;  ///< modules-failing: the modules the policy's compile fails on
  int bisect_evaluations = 0, range_size = 0;
  std::string created_at, updated_at;  ///< ISO 8601 UTC
  std::vector<AlertEventEntry> events;
};

/// A retraining decision with its evidence (filled once decisions are recorded).
struct Decision {
  std::string at, verdict, rule;  ///< at: ISO 8601 UTC
  std::vector<std::string> evidence;
  /// Non-empty when the newest check-in it read is older than the latest the
  /// report shows measured: "judged at …, older than the latest check-in
  /// measured, …: run `driftwatch decide` for the head". A verdict on a head since fixed (or
  /// since broken) must not read as the state of things now.
  std::string stale;
};

struct BuildFailure {
  std::string suite;
  CommitRef commit;
  std::string outcome;
};

/// A sampled check-in of a suite with no point in its series: its
/// evaluation (or the build it waits on) did not finish.
struct NotMeasuredEntry {
  std::string suite;
  CommitRef commit;
  std::string why;  ///< "its evaluation failed (job 12: …); the next sweep tries it again"
};

/// The compiler's feature set as a policy saw it at one evaluated check-in:
/// what it reads and the compiler does not send, what the compiler sends
/// that it does not read.
struct FeatureSets {
  CommitRef at;
  std::vector<std::string> missing, added;
};

/// A check-in where the feature set differs from the previous evaluated one:
/// the sets there, and what changed (each list sorted).
struct FeatureSetChangeEntry {
  std::string suite;
  CommitRef at;
  std::vector<std::string> missing, added;
  std::vector<std::string> newly_missing, sent_again, newly_added, no_longer_added;
};

/// The changes along `sets` (evaluated check-ins, oldest first).
std::vector<FeatureSetChangeEntry> feature_set_changes(const std::string& suite, std::vector<FeatureSets> sets);

/// The baseline drift is measured from, and the latest measurement, per suite.
struct SuiteOverview {
  std::string suite;
  CommitRef baseline, latest;
  double baseline_uplift = 0, latest_uplift = 0;
  bool measured = false;  ///< false when the suite has no evaluated check-in
  /// The first check-in after `latest` (or of all, when none was measured)
  /// where the policy could not run at all, if any.
  CommitRef unusable_since;
  /// Latest against baseline over the modules both measured, as `decide`
  /// compares them: a module that failed at either is left out of both
  /// sides, so the change can differ from latest_uplift - baseline_uplift.
  double change = 0;
  int tried = 0;  ///< check-ins of the series, built or not (read when none was measured)
  /// Modules the latest point measured, of the suite's: a partial point's
  /// uplift is over fewer modules than the baseline's, and is said so.
  int latest_measured = 0, modules = 0;
  /// Sampled check-ins after `latest` (of all, when none was measured) whose
  /// evaluation did not finish, and the newest of them: the series ends
  /// before them, which the overview says.
  int not_measured_after = 0;
  CommitRef newest_not_measured;

  /// For a suite with no measured check-in, why: the policy cannot run on
  /// any, none built, or none swept yet. A sweep that tried and failed must
  /// not read as one that never ran.
  std::string unmeasured_text() const;
  /// " over N of M modules" where the latest point measured fewer than the
  /// suite holds, else "": written after its uplift wherever it is shown.
  std::string partial_text() const;
  /// "-1.91 points" (a difference of two uplifts: percentage points, not
  /// percent of anything): the change; " over the modules both measured" added
  /// where that is not latest_uplift - baseline_uplift, which the reader
  /// sees beside it and would otherwise take for a wrong sum.
  std::string change_text() const;
};

struct ReportData {
  /// 2: times are ISO 8601 UTC; 3: a point with no evaluation has null figures (uplift, totals, counts)
  static constexpr int kSchemaVersion = 3;
  std::string project, generated_at, commit_url;  ///< generated_at: ISO 8601 UTC
  PolicyInfo policy;
  std::string baseline_note;  ///< how the baseline was chosen
  std::vector<SuiteOverview> overview;
  std::vector<SuiteSeries> suites;
  std::vector<ReportAlert> alerts;
  std::vector<Decision> decisions;  ///< newest first
  std::vector<BuildFailure> build_failures;
  std::vector<NotMeasuredEntry> not_measured;  ///< in history order, suite by suite
  std::vector<FeatureSetChangeEntry> feature_changes;
  /// The newest sweep has not analysed what it measured (it was killed, or
  /// runs still): "the last sweep (#7, started …) was interrupted before …".
  /// Said beside the alerts, or "no change was found" would be read of
  /// measurements nobody analysed. "" when the newest sweep finished.
  std::string analysis_pending;
  /// A project's toolchains stand for check-ins under made-up shas: their
  /// labels by those, so that they are named "toolchain <label>" and never
  /// linked as commits.
  std::map<std::string, std::string> toolchain_labels;
  /// How a check-in is named to people: "toolchain <label>", or its short sha.
  std::string name_of(const std::string& sha) const;
  /// True when nothing was measured yet: the report says so.
  bool empty() const;
  /// Alerts still open (state open or acknowledged).
  std::size_t open_alerts() const;
  /// Of those, the ones someone acknowledged: `alerts --exit-code` leaves them out.
  std::size_t acknowledged_alerts() const;
  /// "2 of 5" or "2 of 5 (1 acknowledged)": the same words in every format.
  std::string open_alerts_text() const;
};

/// "https://…/commit/{sha}" with the sha filled in; "" when no template.
std::string commit_link(const std::string& url_template, const std::string& sha);

/// The baseline, as `report` and `decide` both read it, from the history
/// positions of the evaluated check-ins (ascending): the first at or after
/// the policy's training check-in (that one when it was evaluated; the next
/// when it lies before the project's range, or its build or evaluation
/// failed). None when nothing was evaluated since it; the first evaluated
/// one when the policy names no check-in of the history (nullopt).
std::optional<int> baseline_position(const std::vector<int>& evaluated, std::optional<int> trained_position);
/// The same for a report's series: the index of its baseline point.
std::optional<std::size_t> baseline_index(const SuiteSeries& series, std::optional<int> trained_position);

}  // namespace reports
