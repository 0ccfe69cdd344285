#pragma once
// Slurm as a farm's scheduler: a sweep submits its workers as one sbatch job
// array (each task runs `driftwatch worker` on the job table) and follows it
// with squeue. Slurm only places the workers; PostgreSQL keeps the work, so a
// task cancelled or preempted merely lets its lease expire. The script and
// the parsing are pure; SlurmArray runs sbatch, squeue and scancel.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/result.h"

namespace sweep {

struct SlurmSpec {
  std::string driftwatch;  ///< the binary the tasks run (this one)
  std::filesystem::path data_dir;  ///< the tasks' --data-dir (shared: suites, work trees, artifact cache)
  std::string project;             ///< the tasks claim this project's jobs only
  std::string partition;           ///< "" for the cluster's default
  int tasks = 1;                   ///< array size: workers
  int jobs = 1;                    ///< parallel compiles per worker (--cpus-per-task)
  double idle_exit = 30;           ///< a task ends after this long without runnable work
  double retry_backoff = 10;       ///< the project's [run] retry_backoff
  std::filesystem::path log_dir;   ///< each task's output: worker-<array>_<task>.out
};

/// The batch script: #SBATCH lines, then `exec driftwatch … worker …`. The
/// database comes from DRIFTWATCH_DB in the submitting environment (sbatch
/// exports it), never from the script file.
std::string slurm_batch_script(const SlurmSpec& spec);

/// What one squeue call says of an array.
struct ArrayTasks {
  std::map<std::string, int> states;  ///< tasks by state ("PENDING", "RUNNING", …); empty once all ended
  std::string pending_reason;         ///< why pending tasks wait ("Resources", …), distinct reasons joined by "; "
};

/// Parses `squeue -h -o %i|%T|%r`: one poll gives both the states and the reasons.
ArrayTasks parse_squeue(const std::string& output);

/// How long the tasks' outputs (worker-*.out) are kept: a nightly sweep
/// submits an array or more every night, and nothing else removes them.
inline constexpr int kWorkerLogDays = 30;

/// Removes the task outputs in `log_dir` last written more than `days` ago;
/// any other file is left alone. Returns how many went.
int prune_worker_logs(const std::filesystem::path& log_dir, int days);

/// One submitted array.
class SlurmArray {
 public:
  /// Writes the script under spec.log_dir and submits it; the error names
  /// sbatch's complaint. `dsn` goes to the tasks through the environment.
  /// Task outputs older than kWorkerLogDays are removed first.
  static common::Result<SlurmArray> submit(const SlurmSpec& spec, const std::string& dsn);
  const std::string& id() const { return id_; }
  /// Its tasks still pending or running, and why the pending ones wait.
  common::Result<ArrayTasks> active() const;
  /// scancel: the tasks' leases expire, or their jobs are finished already.
  void cancel() const;
  /// `sacct` lines for the array when Slurm keeps accounting, else "".
  std::string accounting() const;

 private:
  std::string id_;
};

/// scancel of array `id`, as SlurmArray::cancel (a sweep stopped by a
/// signal, from the process that hands its jobs back): "" once done, else
/// what scancel said.
std::string cancel_slurm_array(const std::string& id);

/// The last line a task of array `id` wrote to its output under `log_dir`
/// (the first task's that wrote any), "" when none: why tasks that ended
/// without a job did (a binary missing on the node, say).
std::string last_task_words(const std::filesystem::path& log_dir, const std::string& array_id);

/// "2 running, 1 pending".
std::string describe_tasks(const std::map<std::string, int>& states);

}  // namespace sweep
