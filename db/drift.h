#pragma once
// Reading the recorded series back for drift analysis, and writing what the
// analysis found: drift points and alerts (deduplicated by fingerprint) with
// their states and deliveries.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/evaluation_reuse.h"
#include "db/store.h"

namespace db {

/// A point's build_outcome where the build succeeded but its compiler compiled
/// no module of the suite even under its default heuristic.
inline constexpr const char* kCompilerBroken = "compiler-broken";

/// One check-in of a repository built with a recipe, and its evaluation (if
/// any) of one policy on one suite.
struct SeriesPoint {
  Id commit_id = 0;
  std::string sha, author, subject;
  std::int64_t time = 0;
  std::string build_outcome;  ///< ok, build-failed, …, or kCompilerBroken
  bool evaluated = false;     ///< a done evaluation exists
  /// Without a done one: why the newest evaluation failed as a whole (the
  /// policy cannot run on this compiler); "" when none failed.
  std::string evaluation_error;
  double uplift = 0, total_uplift = 0;
  std::int64_t total_default = 0, total_learned = 0;
  int wins = 0, ties = 0, losses = 0;
  /// Modules the default compiled and the policy's compile failed on (not in
  /// the above), by name in byte order.
  std::vector<std::string> learned_failing;
  int learned_failed() const { return static_cast<int>(learned_failing.size()); }
  /// Modules the default compiled and whose learned compile never asked the
  /// policy (others of the suite did): compiled as if the policy were not
  /// there. Not in learned_failing (no loss of the policy's: decide leaves
  /// them out), but news when it starts. By name in byte order.
  std::vector<std::string> learned_unasked;
  /// Modules the compiler failed under its own default heuristic, not by
  /// the machine's doing (load_series' `machine`): the compiler's
  /// regression, whatever the policy does. By name in byte order. A hang
  /// counts only when it timed out again when compiled alone: one timeout
  /// may be the machine's load.
  std::vector<std::string> default_failing;
  /// Modules whose default compile timed out without being found hanging
  /// alone (the machine's load; or stored before hangs were told apart):
  /// whether the compiler fails them here is unknown. By name in byte order.
  std::vector<std::string> default_unsure;
  /// Modules the default compiled and whose learned compile the machine may
  /// have failed (a timeout, killed, out of memory; not so again alone):
  /// neither failing nor compiling under the policy here. Only with a
  /// machine rule. By name in byte order.
  std::vector<std::string> learned_unsure;
  std::string compat_json;  ///< the feature compatibility report
  /// The policy's answers over the evaluation's learned compiles; -1 when
  /// not recorded (no done evaluation).
  std::int64_t learned_decisions = -1;
  struct Module {
    std::string name;
    std::int64_t default_bytes = 0, learned_bytes = 0;
  };
  std::vector<Module> modules;  ///< .text per module, both heuristics measured; by name in byte order
};

/// Every recorded build of the repository with the recipe, with its
/// evaluation by the policy on the suite; unordered (the caller orders by
/// first-parent position). `machine`: how a module's failure is told to be
/// the machine's, for SeriesPoint::default_failing (none: left empty).
std::vector<SeriesPoint> load_series(Database& db, Id repository_id, const std::string& recipe_hash,
                                     const std::string& policy_hash, const std::string& suite_manifest_hash,
                                     const MachineFailureRule* machine = nullptr);

struct AlertRow {
  std::string fingerprint;
  std::string project;
  std::string kind;  ///< as sweep::Finding::kind
  std::string policy_hash, suite_manifest_hash;
  std::string recipe_hash;  ///< the build recipe of the series it was found on
  /// Its fingerprint as driftwatch wrote it before alerts had a recipe: an
  /// alert of that fingerprint and no recipe is this one, given its recipe.
  std::string legacy_fingerprint;
  std::string metric;
  Id last_good_commit_id = 0, first_bad_commit_id = 0, culprit_commit_id = 0, range_first_commit_id = 0;
  double magnitude = 0;
  std::string details_json = "{}";
  bool notify = false;  ///< a hook or webhook is configured
  /// Its failure is over at a later check-in (sweep::Finding::recovered_at):
  /// an alert resolved so stays resolved; without it, found again, it opens again.
  bool recovered = false;
};

/// How the note of an alert resolved because its failure is over begins
/// ("recovered: it builds again at …"): one that opens again should the
/// failure be back at the head.
inline constexpr const char* kRecoveredNotePrefix = "recovered: ";

/// The note of a toolchain's alert whose change its line no longer shows
/// (a nightly added between, re-dated, moved or taken off the list): one of
/// the two kinds of alert driftwatch resolved that open again when found again.
inline constexpr const char* kLeftTheLineNote =
    "the toolchains no longer show this change where it was found (a toolchain added between, re-dated, moved or "
    "taken off the list); see the newer alerts";
/// A repository's alert whose check-in the tracked branch no longer reaches
/// (its history rewritten: a reset, a force-push): nothing revisits it, and
/// it would stay open for ever; found again should the history come back.
inline constexpr const char* kHistoryRewrittenNote =
    "its check-in is no longer in the tracked branch's history (rewritten: a reset or a force-push); see the newer "
    "alerts";
/// The other: a slow drift across samples no longer told over these samples
/// (a sample measured late, a step found inside, an edited grid), which an
/// edit back or a later sweep may tell again.
inline constexpr const char* kDriftRetoldNote =
    "superseded: the slow drift is now told over other samples (see the newer alerts)";

/// Opens the alert unless its fingerprint (or, with no recipe recorded, its
/// legacy fingerprint) exists or its policy is not the project's active one
/// (replaced while the sweep ran); true when it is new.
bool open_alert(Database& db, const AlertRow& alert);

struct AlertView {
  Id id = 0;
  std::string project, kind, state, state_by, note, fingerprint;
  std::string suite, policy, metric;
  std::string policy_hash;  ///< the content hash of the policy it was found for
  std::string suite_manifest_hash;  ///< and of the suite's manifest (a rebuilt suite is another series)
  std::string recipe_hash;  ///< and of the recipe (another recipe is another series); empty: not recorded
  std::string culprit_sha, culprit_subject, culprit_author;
  std::int64_t culprit_time = 0;
  std::string last_good_sha, first_bad_sha, range_first_sha;
  std::string last_good_subject, first_bad_subject, range_first_subject;  ///< a toolchain's label is its subject
  double magnitude = 0;
  std::string details_json;
  std::string notify_state, notify_error;
  bool hook_sent = false, webhook_sent = false;  ///< which channels have it: a failed one is retried alone
  int notify_attempts = 0;
  /// Its end's notice (a failure over by itself, once its opening was sent):
  /// none | pending | sent, per channel, and attempts, as the opening's.
  std::string resolution_notify_state, resolution_notify_error;
  bool resolution_hook_sent = false, resolution_webhook_sent = false;
  int resolution_notify_attempts = 0;
  bool end_doubted = false;            ///< a person reopened it after driftwatch resolved it as over
  bool hook_told = false, webhook_told = false;  ///< an opening of it ever reached that channel
  /// Its opening is pending and driftwatch found it over, but a person
  /// acknowledged, resolved or ignored it since driftwatch opened it: that
  /// late opening is theirs, owed to no channel. False in every other case.
  bool late_opening_theirs = false;
  std::string created_at, updated_at;  ///< ISO 8601 UTC, "2026-01-31T12:00:00Z"
};

/// Re-pins an alert a later sweep narrowed (bisection finished what an
/// earlier one left as a range): its fingerprint, check-ins and evidence are
/// replaced, its state kept, `note` goes into its history, and it is
/// delivered again with the narrower pin. False when another alert already
/// has the new fingerprint.
bool narrow_alert(Database& db, Id id, const AlertRow& a, const std::string& note);

/// Found again under its fingerprint with other check-ins (a spread change,
/// named by its samples, whose ends a later measurement inside moved): an
/// alert still open or acknowledged takes them and its evidence, with
/// "its range is now …: <sentence>" in its history, and no new delivery
/// (its change is the same; a webhook keeps the range it was sent). False
/// when it is not open or acknowledged, or has those check-ins already.
bool repin_alert(Database& db, const AlertRow& a, const std::string& sentence);

/// The project's alerts, newest first; `states` empty for all.
std::vector<AlertView> list_alerts(Database& db, const std::string& project, const std::vector<std::string>& states);
/// One of the project's alerts; none when the id names no alert or another project's.
std::optional<AlertView> find_alert(Database& db, const std::string& project, Id id);
/// Moves an alert to `state` (acknowledged, resolved, ignored, open) with who and a note.
/// An empty note keeps the alert's last one (every note stays in its events).
/// False, with no change, when no such alert, or when driftwatch resolves
/// one that is not open or acknowledged (a person moved it since).
/// Resolved by driftwatch as over (a note starting kRecoveredNotePrefix),
/// its end is due to the channels its opening reached. A person moving one
/// driftwatch resolved as over out of resolved marks that end doubted
/// (AlertView::end_doubted), which driftwatch's own reopening keeps.
/// `details`: keys set in its details with the move (where a failure
/// recovered, as driftwatch resolves it as over); a person moving it out of
/// resolved takes those keys out again.
bool set_alert_state(Database& db, const std::string& project, Id id, const std::string& state, const std::string& who,
                     const std::string& note, const std::string& details = "");

/// Resolves the project's open and acknowledged alerts about suite `name` as
/// another build of it (a manifest other than `manifest_hash`) measured them:
/// nothing charts or revisits that series now, and `alerts --exit-code`
/// would fail on them for ever. Returns how many.
int resolve_alerts_of_rebuilt_suite(Database& db, const std::string& project, const std::string& name,
                                    const std::string& manifest_hash);
/// The same for the project's recipe: alerts found on the builds of another
/// recipe than `recipe_hash` (the compile line changed) are resolved, and
/// those this resolved whose recipe is `recipe_hash` again (changed back) are
/// reopened: their fingerprints are found again, and would stay resolved.
/// Alerts whose recipe was not recorded are left alone. Returns how many
/// were resolved.
int follow_recipe(Database& db, const std::string& project, const std::string& recipe_hash);
/// The same for the project's policy (its file replaced by hand, with no
/// lineage to hand its alerts over): alerts of another policy than
/// `policy_hash` are resolved, those of `policy_hash` resolved so are reopened.
int follow_policy(Database& db, const std::string& project, const std::string& policy_hash);
/// The same for the project's suites, as (name, manifest hash): alerts of a
/// suite whose name the project no longer lists are resolved, and those of
/// a listed suite (that build of it) resolved so are reopened.
int follow_suites(Database& db, const std::string& project,
                  const std::vector<std::pair<std::string, std::string>>& suites);

struct AlertEvent {
  std::string state, who, note, at;  ///< at: ISO 8601 UTC
};
std::vector<AlertEvent> alert_events(Database& db, Id id);

/// Why a module gave no measurement where an alert saw it fail.
struct ModuleFailure {
  std::string module, outcome, message;  ///< outcome: compiler-crashed, timeout, … (evaluator/evaluation.h)
};
/// The failed compiles under `heuristic` ("learned" or "default") of the
/// alert's evaluation at its first bad check-in (its build, policy and
/// suite), by module name: what a modules-failing or compiler-failing alert
/// names, with the compiler's reason (a crash's signal, a hang's timeout).
std::vector<ModuleFailure> alert_module_failures(Database& db, Id alert_id, const std::string& heuristic);

/// Open alerts whose delivery is still pending (one a person acknowledged,
/// resolved or ignored meanwhile is not sent), those tried least often
/// first: one a channel hangs on goes after those it kept waiting. One
/// driftwatch found over before its opening reached a channel is listed
/// too: its opening, then its end, are news to that channel.
std::vector<AlertView> undelivered_alerts(Database& db, const std::string& project);
/// Alerts whose end (a failure over) is still to be told, tried least often first.
std::vector<AlertView> undelivered_resolutions(Database& db, const std::string& project);
/// The project's pending ends are let go (notify.resolved = false): turned
/// on again, it tells the ends found from then on, not a backlog. Returns how many.
int drop_pending_resolutions(Database& db, const std::string& project);
/// Open alerts raised while the project had no notification channel
/// (delivery "none") become pending, so that a channel configured later
/// receives what is still open; returns how many.
int adopt_unnotified_alerts(Database& db, const std::string& project);
/// The alert as it is now, when it is still to be delivered and no other
/// process is delivering it: this connection holds it until
/// release_delivery (or until it closes). nullopt: leave it alone. Without
/// it, `alerts notify` from cron during a sweep's delivery ran the hook
/// twice for one alert.
/// `resolution`: its end's notice, not its opening's.
std::optional<AlertView> claim_delivery(Database& db, Id id, bool resolution = false);
void release_delivery(Database& db, Id id);
/// One delivery attempt: the channels that took the alert this time, and
/// what failed (empty: it is sent, on every channel it was still due on).
struct Delivered {
  bool hook = false, webhook = false;
  std::string error;
  /// False when no channel failed but for those not tried this run (one hung
  /// on an earlier alert): not an attempt of this alert's, so not counted.
  bool attempted = true;
  /// The alert's fingerprint as delivered: a sweep that narrowed it while it
  /// was being delivered made it due again, and that stays so.
  std::string fingerprint;
  bool resolution = false;  ///< its end's notice, not its opening's
};
void mark_delivery(Database& db, Id id, const Delivered& d);

/// Records the analysed series point (replacing an earlier one).
void record_drift_point(Database& db, const std::string& project, const std::string& policy_hash,
                        const std::string& suite_manifest_hash, const std::string& metric, Id commit_id, int position,
                        double value, int wins, int ties, int losses, bool is_change_point);

}  // namespace db
