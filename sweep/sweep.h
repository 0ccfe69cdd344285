#pragma once
// A sweep of a project: sample the check-ins (or toolchains) to measure, plan
// them as jobs, run workers until every job has finished, and record the
// sweep. Killed at any point, a rerun continues where it stopped: jobs are
// keyed by what they compute and finished with their results.
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "db/database.h"
#include "db/jobs.h"
#include "sweep/drift.h"
#include "sweep/progress.h"
#include "sweep/project_file.h"
#include "tracker/commit.h"

namespace sweep {

/// Another sweep of the project holds its lock.
class SweepBusy : public common::Fatal {
 public:
  using common::Fatal::Fatal;
};

/// Where a sweep's jobs run: its own worker threads, workers started by
/// someone else (systemd, Kubernetes, `driftwatch worker` by hand), or a
/// Slurm job array that the sweep submits and follows.
enum class Engine { Local, External, Slurm };
/// "local", "external", "slurm"; nullopt for another word.
std::optional<Engine> parse_engine(const std::string& name);

struct SweepOptions {
  ProjectFile project;
  db::Target target;
  std::filesystem::path data_dir;
  bool only_new = false;       ///< only check-ins after the last swept one
  std::string every, since;    ///< override the project's sampling
  int jobs = 0;                ///< parallel compiles; 0 = the project's, else one per core
  int workers = 1;             ///< local workers, or the Slurm array's tasks
  Engine engine = Engine::Local;
  std::string partition;       ///< Slurm partition ("" for the default)
  std::string dsn;             ///< what remote workers connect to (Slurm): the target's conninfo
  /// Remote engines: no job running and none finished for this long fails
  /// the sweep, naming why Slurm's tasks wait (0: wait however long).
  std::chrono::seconds stall{3600};
  Progress* progress = nullptr;
  /// Told the id of each Slurm array the sweep submits: a sweep stopped by
  /// a signal cancels it (cli's hand-back), else its tasks run on unwatched.
  std::function<void(const std::string& array_id)> on_slurm_array;
};

struct SweepReport {
  db::Id sweep_id = 0;
  int checkins = 0;          ///< sampled (and baseline) check-ins planned
  db::JobCounts jobs;        ///< over the sweep's jobs, at the end
  std::string head;          ///< newest check-in planned
  bool nothing_new = false;  ///< --new found nothing after the last sweep
  /// Why the tracked branch looks stale (its tip older than the project's
  /// sampling.stale_after), else empty: the sweep ran, and still failed.
  std::string stale_tip;
  double seconds = 0;
  std::vector<std::string> failures;  ///< failed jobs: "what: why"
  std::vector<std::string> did_not_build;  ///< builds that gave no compiler: "sha: outcome (why)"
  DriftReport drift;                  ///< the analysis after the sweep
  JobTime time;                       ///< of the jobs this process ran (bisection's included)
};

/// Throws SweepBusy when another sweep of the project runs, common::Fatal
/// for bad input (a lost baseline, a rewritten branch, a missing suite).
SweepReport run_sweep(const SweepOptions& options);

/// The check-ins a sweep samples from a repository, oldest first. With
/// `after` (the last swept head), only those after it; its absence from the
/// first-parent line is an error (a force-push), and nothing is deleted.
/// `nightly`: a `--new` sweep of the whole range (the first, or after the
/// sampling changed) leaves the period still going on for later, as one
/// with `after` does.
common::Result<std::vector<std::string>> sweep_checkins(const ProjectFile& project, const std::string& every,
                                                        const std::string& since,
                                                        const std::optional<std::string>& after,
                                                        const std::string& baseline, bool nightly = false);

/// Where the project's drift begins in `history` (its repository's
/// first-parent line, oldest first): the first check-in of its range (`from`,
/// `since`), or the policy's training check-in `trained_at` when that is
/// later. The series is read per repository, recipe, policy and suite, not
/// per project: what was measured before (a one-off `eval`, another
/// project's sweep, an earlier `since`) is not the project's drift, nor its
/// baseline. Drift, `decide` and the report all start here. 0 when the range
/// cannot be read (a shallow clone that ends inside it): all of it counts;
/// history.size() when it selects nothing (a `since` after the last check-in).
std::size_t project_range_start(const ProjectFile& project, const std::vector<tracker::CommitInfo>& history,
                                std::optional<std::size_t> trained_at);
/// Refuses, in one line, a range that selects nothing (`start` at the end of
/// a history that has check-ins): `what` ("decide") would otherwise read an
/// empty series, or, before, the whole history.
void require_range_selects(const ProjectFile& project, const std::vector<tracker::CommitInfo>& history,
                           std::size_t start, const char* what);
/// Where the project's range ends in `history`: just after the last
/// check-in dated on or before its `until` (history.size() without one; 0
/// when none is). What another project measured later (a nightly's range
/// that ends at `until`, re-run tomorrow with a later one) is not this
/// project's drift, decision or report, as it is not its sweep. `trained`
/// (a full sha): the policy's training check-in, kept when it lies later
/// (a policy retrained at the tip), so that it is still known as such and
/// nothing before it is taken for the policy's drift.
std::size_t project_range_end(const ProjectFile& project, const std::vector<tracker::CommitInfo>& history,
                              const std::string& trained = "");

}  // namespace sweep
