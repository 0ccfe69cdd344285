#pragma once
// The job table that sweeps plan and workers claim. A job is identified by
// what it computes (its key), held by a lease that its worker renews, and
// finished in the same transaction as its results, so a killed worker leaves
// neither half results nor duplicates. Times come from the database's clock.
#include <cstdint>
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

struct Job {
  Id id = 0;
  std::string kind;
  std::string payload_json;
  int attempts = 0;
  int max_attempts = 3;
  std::optional<Id> depends_on;
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

Id begin_sweep(Database& db, const std::string& project);
void finish_sweep(Database& db, Id sweep_id, const std::string& state, const std::string& head_sha, int planned,
                  const std::string& message);
/// The newest check-in that a finished sweep of the project planned, if any.
std::optional<std::string> last_swept_head(Database& db, const std::string& project);

/// Enqueues the batch and returns the jobs' ids in batch order. A key that
/// exists keeps its job: done stays done; failed and skipped go back to queued
/// (a transient failure is retried by the next sweep).
std::vector<Id> enqueue_jobs(Database& db, const std::string& project, Id sweep_id, const std::vector<JobSpec>& jobs);

/// Claims the next runnable job of the project (any project when empty) whose
/// dependency has finished, or whose lease expired; nullopt when none is
/// runnable now. A job past its attempts is marked failed instead.
std::optional<Job> claim_job(Database& db, const std::string& project, const std::string& owner,
                             const std::vector<std::string>& kinds, int lease_seconds);
/// Extends the lease; false when the job is no longer ours (expired and taken).
bool renew_lease(Database& db, Id job_id, const std::string& owner, int lease_seconds);
/// Finishes a job that stored nothing else (or failed): state done, failed or skipped.
void finish_job(Database& db, const JobFinish& finish, const std::string& state, const std::string& error = "");
/// Puts the project's failed jobs back in the queue (the next sweep retries
/// transient failures); returns their ids.
std::vector<Id> requeue_failed_jobs(Database& db, const std::string& project);
/// Puts back jobs that `owner_prefix`'s processes held when they died.
int requeue_jobs_of(Database& db, const std::string& owner);
/// The running jobs' owners of a project, for finding dead local workers.
std::vector<std::string> running_job_owners(Database& db, const std::string& project);

struct JobState {
  Id id = 0;
  std::string kind, state, result_json, error;
  int attempts = 0;
};
std::optional<JobState> job_state(Database& db, Id job_id);

struct JobCounts {
  int queued = 0, running = 0, done = 0, failed = 0, skipped = 0;
  int total() const { return queued + running + done + failed + skipped; }
  int finished() const { return done + failed + skipped; }
};
/// Counts over the given jobs.
JobCounts count_jobs(Database& db, const std::vector<Id>& job_ids);

}  // namespace db
