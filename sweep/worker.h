#pragma once
// A worker: claims jobs from the job table, runs them (build a check-in;
// evaluate a build on a suite), and finishes each in the transaction that
// stores its results. The sweep runs workers in its own process; `driftwatch
// worker` runs the same loop anywhere that reaches the database.
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "db/jobs.h"
#include "sweep/worker_name.h"

namespace sweep {

/// What a finished job did, for progress and logs.
struct JobEvent {
  std::string kind;   ///< "build" or "eval"
  std::string state;  ///< done, failed, skipped; queued (failed, retried later); lost (kJobLost)
  std::string what;   ///< "1a2b3c4d5e6f holdout: uplift +1.20%"
  double seconds = 0;
  /// Where the time went: moving the work tree, building, compiling and
  /// measuring the suite, storing (with reading the cache and suite).
  double checkout = 0, build = 0, evaluate = 0, store = 0;
  db::Id job_id = 0;
};

/// A JobEvent's state when the job was taken from this worker before it finished.
inline constexpr const char* kJobLost = "lost";

struct WorkerOptions {
  db::Target target;
  std::string project;  ///< "" for any project
  std::string owner;    ///< unique per worker: worker_owner_name()
  std::vector<std::string> kinds;  ///< empty: all
  std::filesystem::path data_dir;
  int jobs = 1;  ///< parallel compiles within one job
  /// A build job's -j when set (> 0), else `jobs`: builds of one compiler
  /// take turns on its work tree, so the workers of one machine that split
  /// the cores for their compiles would leave most of them idle while one builds.
  int build_jobs = 0;
  int lease_seconds = 120;
  /// First retry's wait after a failed attempt, doubled for each further one.
  double retry_backoff = 10;
  int max_jobs = 0;         ///< stop after this many; 0 = no limit
  double idle_exit = 0;     ///< seconds to wait for new work before exiting; 0 = exit when none is runnable
  /// How long to keep reconnecting to a database that went away.
  double reconnect_seconds = 60;
  std::function<void(const std::string&)> log;
  std::function<void(const JobEvent&)> on_job;
  std::function<void(const std::string& what, int done, int total)> on_module;
};

struct WorkerReport {
  int done = 0, failed = 0, skipped = 0;
  int retried = 0;  ///< attempts that failed and went back to the queue
  int lost = 0;     ///< jobs whose lease was lost before they finished
};

/// Runs jobs until none is runnable (or idle_exit passes, or max_jobs, or
/// stop). Throws common::Fatal when the database stays away.
WorkerReport run_worker(const WorkerOptions& options);

class Progress;

/// Seconds spent by the jobs a process's workers ran, summed.
struct JobTime {
  double jobs = 0, checkout = 0, build = 0, evaluate = 0, store = 0;
};

/// Workers of this process for a set of jobs: what a sweep and a bisection run.
struct LocalWorkers {
  db::Target target;
  std::string project;
  std::filesystem::path data_dir;
  int jobs = 1;     ///< parallel compiles per worker
  int workers = 1;  ///< worker threads; 0: the jobs run on workers started elsewhere
  Progress* progress = nullptr;
  std::vector<std::string>* failures = nullptr;  ///< failed jobs: "what: why"
  std::set<db::Id>* failed_ids = nullptr;        ///< the jobs of `failures`
  JobTime* time = nullptr;                       ///< summed over the jobs run here
  /// Called at each poll while jobs remain, with the jobs waited for and
  /// their counts: keeps remote workers going (a Slurm array). Throws
  /// common::Fatal when they cannot be.
  std::function<void(const db::JobCounts&, const std::vector<db::Id>& ids)> remote;
  int build_jobs = 0;  ///< a build's -j (WorkerOptions::build_jobs); 0: `jobs`
  double retry_backoff = 10;  ///< WorkerOptions::retry_backoff
};

/// Runs local workers until every job of `ids` has finished (some may run on
/// remote workers: then it waits for them).
void run_until_finished(const LocalWorkers& local, db::Database& db, const std::vector<db::Id>& ids);

/// The failed jobs among `ids` that no local worker reported (`reported`:
/// LocalWorkers::failed_ids), as "kind job N: why": jobs run on remote
/// workers, given up when claimed (workers that kept dying), or cancelled by
/// a person.
std::vector<std::string> failures_not_seen_here(db::Database& db, const std::string& project,
                                                const std::vector<db::Id>& ids, const std::set<db::Id>& reported);
/// The builds the sweep ran (bisection's too) that gave no compiler, oldest
/// first: "0123456789ab: timeout (…)". Not failures of the sweep (the
/// check-in is recorded as broken), but a quiet night's summary names them;
/// a build done by an earlier sweep is not this one's news.
std::vector<std::string> builds_without_compiler(db::Database& db, const std::string& project, db::Id sweep_id);

}  // namespace sweep
