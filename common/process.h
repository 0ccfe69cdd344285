#pragma once
// Running subprocesses (compilers, build tools, pg_ctl) with timeouts that
// kill the whole process group, so a hanging build never hangs a sweep.
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace common {

struct ProcessSpec {
  std::vector<std::string> argv;  ///< argv[0] is looked up on PATH
  std::optional<std::filesystem::path> cwd;
  /// Set on top of ours. Children never inherit DRIFTWATCH_DB nor libpq's PG*
  /// variables (the database password); set one here to pass it on purpose.
  std::vector<std::pair<std::string, std::string>> env;
  /// stdout and stderr go here (appended) when set...
  std::optional<std::filesystem::path> log_file;
  /// ...otherwise they are captured into ProcessResult::output.
  std::optional<std::chrono::milliseconds> timeout;
  /// Standard input comes from this file; /dev/null otherwise.
  std::optional<std::filesystem::path> stdin_file;
  /// A session of its own rather than a process group (its id is the
  /// child's pid either way). A build step's ninja starts every command in a
  /// process group of its own, out of reach of the step's group; a session
  /// holds them all, and a kill of the child ends the whole session.
  bool own_session = false;
};

struct ProcessResult {
  int exit_code = -1;   ///< valid when signal == 0 and !timed_out
  int signal = 0;       ///< the signal that killed it, 0 if it exited
  bool timed_out = false;
  bool stopped = false;  ///< killed because the work it ran for was called off (StopScope)
  double seconds = 0;   ///< wall time
  std::string output;   ///< captured stdout+stderr (when no log_file); past 9 MiB its first 1 and last 4 MiB

  bool ok() const { return !timed_out && !stopped && signal == 0 && exit_code == 0; }
  /// "exit status 2", "killed by signal 11 (Segmentation fault)", "timed out after 30 s".
  std::string describe() const;
};

/// Work that another thread may call off: a worker's job that people
/// cancelled, or whose lease another worker took. While a scope is alive,
/// every child the calling thread waits for (wait, try_wait) is killed, its
/// whole group, once `stop` is set, and its result says `stopped`; so a
/// build or compile of a job that is no longer this worker's stops within
/// moments rather than running for an hour to be refused. Threads that work
/// for the scope's thread (a pool of compiles) open one with current().
class StopScope {
 public:
  explicit StopScope(const std::atomic<bool>* stop);
  ~StopScope();
  StopScope(const StopScope&) = delete;
  StopScope& operator=(const StopScope&) = delete;
  /// The calling thread's flag (nullptr when none), for threads it starts.
  static const std::atomic<bool>* current();
  /// Whether the calling thread's work was called off.
  static bool stopped();

 private:
  const std::atomic<bool>* previous_;
};

/// A started child in its own process group.
class Child {
 public:
  /// Fails (as a value) only when the program cannot be started at all.
  static Result<Child> start(const ProcessSpec& spec);
  Child(Child&&) noexcept;
  Child& operator=(Child&&) noexcept;
  Child(const Child&) = delete;
  ~Child();  ///< kills the group if still running

  int pid() const { return pid_; }
  /// The result if the child has exited, without blocking (or once killed
  /// because its work was called off: StopScope).
  std::optional<ProcessResult> try_wait();
  /// Blocks until exit or until the spec's timeout (or StopScope's stop), then kills the group.
  ProcessResult wait();
  /// SIGTERM then SIGKILL to the whole group; reaps the child.
  ProcessResult kill_group();

 private:
  Child() = default;
  /// Reads what the child printed; waits up to timeout_ms for output or its exit.
  void drain_output(int timeout_ms);
  /// Appends to output_, keeping its head and tail when it grows too large.
  void keep_output(std::string_view bytes);
  /// Cuts output_ to its first kOutputHead and last kOutputTail bytes.
  void leave_out_middle();
  ProcessResult finish(int status);

  int pid_ = -1;
  int out_fd_ = -1;
  int pid_fd_ = -1;  ///< pidfd: readable when the child exits, so waiting never sleeps blindly
  std::chrono::steady_clock::time_point started_;
  std::optional<std::chrono::milliseconds> timeout_;
  std::string output_;
  std::size_t output_left_out_ = 0;
  std::optional<ProcessResult> done_;
  bool own_session_ = false;
};

/// On SIGINT, SIGTERM or SIGHUP: kill every running child's process group
/// (ninja and its compilers, apt, compiles), then die of the signal. Nothing
/// half-done is stored: a rerun continues where the jobs stood.
void kill_children_on_signals();
/// Makes kill_children_on_signals' handler, once the children's groups are
/// killed, replace this process with `argv` (argv[0] a path; the signal's
/// number appended as the last word) in environment `env`, rather than die:
/// a worker's last word to the database, which a handler cannot say itself.
/// Should the exec fail, the process dies of the signal as before.
void exec_after_signals(const std::vector<std::string>& argv, const std::vector<std::string>& env);

/// start() + wait().
Result<ProcessResult> run_process(const ProcessSpec& spec);

/// This machine's host name: with a pid, what tells this machine's processes
/// from another's that share the database or a data directory.
std::string host_name();

/// Who runs this process, for the record of who acted: $USER, else the
/// effective user's login name (cron and systemd set no $USER), else "unknown".
std::string login_name();

/// This process's PID namespace and the machine's boot ("4026531836.1a2b3c4d";
/// "" when unreadable): pids name processes only within it. Containers that
/// share a host name (hostNetwork pods, a compose file's `hostname:`) each
/// have their own namespace, and machines of one name (cloned VMs) their
/// own boot, whose initial namespaces all have the same number.
std::string pid_namespace();

/// Whether process `pid` of machine `host` and PID namespace `pid_ns` is
/// known to be gone: it is this machine's and namespace's, and no such
/// process runs (not this one). Another machine's or container's, or one
/// that runs (perhaps under another user), is not known to be gone.
bool process_gone_here(const std::string& host, const std::string& pid_ns, long pid);

/// This machine's processes (not this one) with `path` open, read from
/// /proc/PID/fd: the peers of a FIFO, which the FIFO itself cannot name.
/// Processes of other users, or of another PID namespace, are not seen.
std::vector<long> processes_holding(const std::filesystem::path& path);

/// This machine's processes (not this one) whose command line names a path
/// inside `dir` (or `dir` itself; or via a symlink): the compiles a SIGKILLed evaluation left
/// behind a wrapper that did not exec (ccache, a site script), which
/// PR_SET_PDEATHSIG cannot reach and a dead ML channel can block for ever.
std::vector<long> processes_naming(const std::filesystem::path& dir);

/// libpq's variables (PG*: PGPASSWORD, PGHOST, …) as this process has them,
/// which children never inherit: for one that connects as driftwatch does
/// (sbatch, whose tasks are workers), to pass on in ProcessSpec::env.
std::vector<std::pair<std::string, std::string>> libpq_environment();

/// /proc/PID/`name` of this machine's process `pid`: empty when the process
/// is gone or may not be read. A process may exit while it is being read,
/// which std::ifstream reports by throwing (libstdc++, on ESRCH).
std::string proc_file(long pid, const char* name);

/// This machine's live processes (zombies left out) of session `sid`, from /proc.
std::vector<pid_t> session_members(pid_t sid);

/// SIGKILL to every process of session `sid` (a child started with
/// own_session) and up to 5 s for them to go; how many there were.
int kill_session(pid_t sid);

}  // namespace common
