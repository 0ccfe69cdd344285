#pragma once
// The job table that sweeps plan and workers claim. A job is identified by
// what it computes (its key), held by a lease that its worker renews, and
// finished in the same transaction as its results, so a killed worker leaves
// neither half results nor duplicates. Times come from the database's clock.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "db/store.h"

namespace db {

// The one table of job states, as the jobs table's CHECK constraint has them.
inline constexpr const char* kJobQueued = "queued";
inline constexpr const char* kJobRunning = "running";
inline constexpr const char* kJobDone = "done";
inline constexpr const char* kJobFailed = "failed";
inline constexpr const char* kJobSkipped = "skipped";

struct JobSpec {
  std::string kind;  ///< "build", "eval"
  std::string key;   ///< what it computes; equal keys are one job
  std::string payload_json = "{}";
  int priority = 0;      ///< higher first; ties in id order
  int depends_on = -1;   ///< index of a job earlier in the same batch, or -1
  int max_attempts = 3;
};

/// The job was no longer this worker's when it tried to finish it (its lease
/// expired and another worker took it, or a person cancelled it): the
/// transaction that would have stored its results is rolled back.
class LeaseLost : public common::Fatal {
 public:
  using common::Fatal::Fatal;
};

struct Job {
  Id id = 0;
  std::string kind;
  std::string payload_json;
  int attempts = 0;
  int max_attempts = 3;
  std::optional<Id> depends_on;
  std::vector<std::string> failed_hosts;  ///< machines on which earlier attempts failed
  /// Earlier attempts that nothing but the machine can have failed
  /// (retry_job_later's `machine_only`).
  int machine_failures = 0;
  /// Failed attempts in a row, up to the last one, that timed out
  /// (retry_job_later's `timed_out`): > 0 when the attempt before timed out.
  int timeouts = 0;
  /// This attempt's failure, if the input may have caused it (a timeout, a
  /// hang), is the input's result: the last attempt, after none that only
  /// the machine failed.
  bool final_attempt() const { return attempts >= max_attempts && machine_failures == 0; }
};

/// How a worker hands back a job: in the transaction that stores its results.
struct JobFinish {
  Id job_id = 0;
  std::string owner;
  std::string result_json = "{}";
};

/// Takes the project's sweep lock (a session-level advisory lock) on this
/// connection; false when another session holds it. Released when the
/// connection closes, so a killed sweep never leaves it behind.
bool try_lock_project(Database& db, const std::string& project);
/// The server process of `db`'s session (read at connect, so known after
/// the connection is lost).
int session_pid(Database& db);
/// Takes the project's sweep lock again on a new connection after the one
/// holding it (server process `lost_pid`) was lost. When the network, not
/// the server, went away, the old session lives on, holding the lock, until
/// the server's keepalive gives up on it: that session, and only while it
/// holds this very lock, is ended first. False when another session holds it.
bool retake_project_lock(Database& db, const std::string& project, int lost_pid);
/// The same for the project's retraining: two retrains at one check-in would
/// share a work directory and a candidate file.
bool try_lock_retrain(Database& db, const std::string& project);

/// Every project the database has a sweep or a job of, by name.
std::vector<std::string> known_projects(Database& db);

/// `project_file`: the file the sweep read (its absolute path), recorded for
/// last_project_file.
Id begin_sweep(Database& db, const std::string& project, const std::string& project_file = "");
/// Marks the project's sweeps still 'running' as 'interrupted': called with
/// the project's lock held (try_lock_project), they ended without finishing
/// (a signal, an error, the database or the machine lost). How many.
int interrupt_dead_sweeps(Database& db, const std::string& project);
/// The project file the project's newest sweep that recorded one read; ""
/// when none did.
std::string last_project_file(Database& db, const std::string& project);
/// `sampling`: the project's sampling settings the grid was planned with
/// (for `--new`'s next run), "" when not the project's own grid.
void finish_sweep(Database& db, Id sweep_id, const std::string& state, const std::string& head_sha, int planned,
                  const std::string& message, const std::string& sampling = "");
/// Whether sweep `sweep_id` was begun (of `project`, unless that is "").
bool sweep_exists(Database& db, Id sweep_id, const std::string& project);
struct LastSweep {
  std::string head_sha;  ///< the newest check-in it planned
  std::string sampling;  ///< the settings its grid was planned with ("" before they were recorded)
};
/// The newest finished sweep of the project that planned a check-in, if any.
std::optional<LastSweep> last_sweep(Database& db, const std::string& project);
struct SweepState {
  Id id = 0;
  std::string state;       ///< running, done, failed, interrupted
  std::string started_at;  ///< ISO 8601 UTC
  std::string message;     ///< how it ended ("" while running): a failed sweep's error
};
/// The project's newest sweep, if any.
std::optional<SweepState> newest_sweep(Database& db, const std::string& project);

/// Enqueues the batch and returns the jobs' ids in batch order. A key that
/// exists keeps its job: done stays done; failed and skipped go back to queued
/// (a transient failure is retried by the next sweep).
std::vector<Id> enqueue_jobs(Database& db, const std::string& project, Id sweep_id, const std::vector<JobSpec>& jobs);

/// How long a machine on which a job failed waits, once the job's retry may
/// start, before it may take the job itself: idle workers ask for work every
/// half second, so another machine idle at the time takes it first. Without
/// it the failing machine, whose wait began as it failed the job, asked at
/// the very moment and won nearly every time: a machine with a full disk
/// spent all of a job's attempts in seconds while healthy ones sat idle.
inline constexpr int kFailedHostGraceSeconds = 3;

/// Whether a job other than `owner`'s runs under a live lease on `owner`'s
/// machine (the part of its name before the first ':').
bool other_jobs_running_on_host(Database& db, const std::string& owner);

/// Claims the next runnable job of the project (any project when empty) whose
/// dependency has finished, or whose lease expired; nullopt when none is
/// runnable now. A job past its attempts is marked failed instead. A job that
/// failed on `owner`'s machine (the part of the owner before its first ':')
/// is left to other machines while one of them holds a live lease, and for
/// kFailedHostGraceSeconds after its retry may start, which lets any idle
/// machine take it first.
std::optional<Job> claim_job(Database& db, const std::string& project, const std::string& owner,
                             const std::vector<std::string>& kinds, int lease_seconds);
/// Extends the lease; false when the job is no longer ours (expired and taken).
bool renew_lease(Database& db, Id job_id, const std::string& owner, int lease_seconds);
/// Finishes a job that stored nothing else (or failed): state done, failed or
/// skipped. Throws LeaseLost when the job is no longer `finish.owner`'s.
void finish_job(Database& db, const JobFinish& finish, const std::string& state, const std::string& error = "");
/// A failed attempt with attempts left: back to the queue, claimable again
/// after `backoff_seconds` of the database's clock, its reason kept in `error`
/// and `owner`'s machine among the job's failed hosts; `timed_out` counts
/// the attempt in Job::timeouts (any other failure sets that back to 0).
/// Throws LeaseLost when the job is no longer `owner`'s.
void retry_job_later(Database& db, Id job_id, const std::string& owner, const std::string& error,
                     double backoff_seconds, bool machine_only = false, bool timed_out = false);
/// What a sweep plans today: failed jobs planned otherwise are left as they
/// are, since a worker would refuse them on every sweep from now on.
struct RequeueFilter {
  std::string recipe_hash;  ///< "" matches any
  std::string policy_hash;  ///< evaluations; "" matches any
  std::string repo;         ///< a checkout since moved; "" matches any
  std::vector<std::string> suite_hashes;  ///< evaluations: a suite since rebuilt; empty matches any
  /// The project's toolchain directories: a nightly's entry since removed
  /// (its directory never published, or pruned) is not tried again.
  /// nullopt matches any.
  std::optional<std::vector<std::string>> toolchains;
};
/// Puts the project's failed jobs back in the queue (the next sweep retries
/// transient failures), and its done evaluation jobs whose evaluation was
/// since run again and interrupted; returns their ids.
std::vector<Id> requeue_failed_jobs(Database& db, const std::string& project, const RequeueFilter& filter = {});
/// The project's jobs of today's plan that wait with nobody to run them:
/// queued (an interrupted sweep's, `jobs retry`'s) or under a lease that
/// ran out, of no running sweep. With `adopt_into`, made that sweep's in the
/// same statement (adopt_jobs), and those returned.
std::vector<Id> waiting_jobs(Database& db, const std::string& project, const RequeueFilter& filter = {},
                             std::optional<Id> adopt_into = std::nullopt);
/// Makes the jobs `ids` the sweep's: the failed jobs requeue_failed_jobs
/// put back before the sweep began are run by it
/// (`jobs cancel --sweep` reaches them, its summary counts their outcomes).
void adopt_jobs(Database& db, Id sweep_id, const std::vector<Id>& ids);
/// How many times a job's attempt is given back for a lost connection
/// (requeue_jobs_of) before one more counts: a connection cut on every run
/// would otherwise run the job for ever.
inline constexpr int kMaxGiveBacks = 5;
/// Puts back jobs that `owner`'s process held when it died or lost the
/// database. `give_back_attempt`: the claim is not counted (the database
/// went away, not the job's doing), up to kMaxGiveBacks times; a worker that
/// died may have died of its job, and an attempt given back each time would
/// let it run for ever. `given_back`, when given, gets how many of them had
/// their attempt given back (the rest had used up kMaxGiveBacks).
int requeue_jobs_of(Database& db, const std::string& owner, bool give_back_attempt, int* given_back = nullptr);
/// The running jobs' owners of a project, for finding dead local workers.
std::vector<std::string> running_job_owners(Database& db, const std::string& project);

struct JobState {
  Id id = 0;
  std::string kind, state, result_json, error;
  int attempts = 0;
};
std::optional<JobState> job_state(Database& db, Id job_id);
/// Whether the job is `project`'s (its own, or shared with it).
bool job_of_project(Database& db, Id job_id, const std::string& project);

/// An evaluation job of a project that has not finished with a result:
/// failed (or cancelled), queued, running, or skipped; with the build job it
/// waits on, whose failure is the reason a skipped one gives none.
struct UnfinishedEvaluation {
  Id id = 0;
  std::string sha, state, error;
  Id build_id = 0;
  std::string build_state, build_error;
  std::string build_outcome;  ///< a done build's ("ok" when it gave a compiler)
  /// Running, but its worker stopped renewing the lease (it, its machine or
  /// its link to the database died): the lease's owner ("host:pid:…").
  std::string lapsed_owner, build_lapsed_owner;
};
/// The project's evaluation jobs of one recipe, policy and suite (manifest
/// hash) that are not done, oldest first: the sampled check-ins a series
/// lacks without a recorded reason. Of the checkout `repo` (its location,
/// as sweeps plan it) and toolchains: a moved checkout's jobs are never run
/// again (requeue_failed_jobs' filter), so not "tried again".
std::vector<UnfinishedEvaluation> unfinished_evaluations(Database& db, const std::string& project,
                                                         const std::string& recipe_hash, const std::string& policy_hash,
                                                         const std::string& suite_hash, const std::string& repo);

/// A row of `driftwatch jobs`: times are the database's, so the lease left is
/// right whatever the clock of the machine that reads it.
struct JobRow {
  Id id = 0;
  std::string project, kind, state, payload_json, owner, error;
  int attempts = 0, max_attempts = 0, priority = 0;
  std::optional<Id> depends_on, sweep_id;
  double running_seconds = 0;  ///< since the current attempt started (running jobs)
  std::optional<double> lease_left_seconds;  ///< running: until the lease expires (negative: expired); queued: until a retry may start
  std::string started_at, finished_at;  ///< ISO 8601, "" when not yet
  std::string result_json;              ///< what a done job handed back ("" when none)
};

struct JobFilter {
  std::string project;              ///< "" for every project
  std::vector<std::string> states;  ///< empty: every state
  std::optional<Id> sweep_id;
  int limit = 1000;  ///< at most this many rows; 0: every one
};
/// Jobs by state (running first, then failed, then queued in claim order, then the rest, newest first).
std::vector<JobRow> list_jobs(Database& db, const JobFilter& filter);

/// A person's retry: a failed or skipped job back to the queue with its
/// attempts reset, with the evaluations skipped because it failed; returns
/// their ids (the job's first). A skipped evaluation's build is queued again
/// with it when that build did not finish (failed, or every attempt timed
/// out): alone, the evaluation would be skipped again at once. An error names
/// a job that does not exist, is not failed, or whose check-in does not build.
common::Result<std::vector<Id>> retry_job_now(Database& db, Id job_id);
/// What a person's cancellation's reason starts with ("cancelled by ana"):
/// how a cancelled job is told from one that failed (JobCounts::cancelled).
inline constexpr const char* kCancelledPrefix = "cancelled by ";
/// Cancels queued and running jobs (one, or those of `filter`): state failed
/// with `reason` (kCancelledPrefix and who); a running job's worker then has
/// its result refused (LeaseLost). Returns the ids cancelled.
/// `were_running`, when given: how many of them were running under a live
/// lease (a worker to stop).
std::vector<Id> cancel_jobs(Database& db, const JobFilter& filter, const std::optional<Id>& job_id,
                            const std::string& reason, int* were_running = nullptr);

struct JobCounts {
  int queued = 0, running = 0, done = 0, failed = 0, skipped = 0;
  /// Times the jobs were handed back by a worker stopped or cut off (count_jobs
  /// only): progress of a kind, though nothing finished.
  int given_back = 0;
  /// Of the failed, those a person cancelled (`jobs cancel`; count_project_jobs
  /// only): a monitor of failures can tell them from the jobs' own.
  int cancelled = 0;
  int total() const { return queued + running + done + failed + skipped; }
  int finished() const { return done + failed + skipped; }
};
/// True when every key names a job that is done or skipped (its check-in did
/// not build): nothing of them is left to do.
bool jobs_finished(Database& db, const std::vector<std::string>& keys);
/// A job's state (queued, running, done, failed, skipped) and, for a done
/// build job, its outcome ("ok" when it gave a compiler; empty for others).
struct JobStateAndOutcome {
  std::string state;
  std::string outcome;
};
/// The state of each key's job; a key no job has is not in it.
std::map<std::string, JobStateAndOutcome> job_states(Database& db, const std::vector<std::string>& keys);
/// Counts over the given jobs; a running job whose lease expired counts as queued.
JobCounts count_jobs(Database& db, const std::vector<Id>& job_ids);
/// Counts per state over a project's jobs (every project when empty), of
/// one sweep when `sweep_id` is not 0.
JobCounts count_project_jobs(Database& db, const std::string& project, Id sweep_id = 0);

}  // namespace db
