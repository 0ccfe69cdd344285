// driftwatch worker and jobs: workers anywhere that reaches the database, and
// the queue they share, for people and for monitoring.
#include <fmt/core.h>
#include <fmt/format.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <optional>

#include "cli/commands.h"
#include "cli/finite.h"
#include "cli/project.h"
#include "common/data_dir.h"
#include "common/process.h"
#include "common/text.h"
#include "db/jobs.h"
#include "policy/model.h"
#include "sweep/compiler_build.h"
#include "sweep/job_listing.h"
#include "sweep/slurm.h"
#include "sweep/worker.h"

extern char** environ;

namespace cli {

namespace {

struct WorkerArgs {
  std::string project, kinds = "build,eval";
  int jobs = 0, max_jobs = 0, lease = 120;
  double idle_exit = -1, retry_backoff = 10;
  std::string hand_back_of;  ///< set by a worker's signal handler (below), not by people
  std::string cancel_slurm_array;  ///< so is this: the Slurm array of a sweep stopped by a signal
  int after_signal = 0;
};

/// The database's projects ("a, b"; "" when none) when `project` is given
/// and none of them; nullopt when it is one (or not given).
std::optional<std::string> projects_if_unknown(db::Database& database, const std::string& project) {
  if (project.empty()) return std::nullopt;
  auto known = db::known_projects(database);
  if (std::find(known.begin(), known.end(), project) != known.end()) return std::nullopt;
  return fmt::format("{}", fmt::join(known, ", "));
}

/// What a worker that got SIGTERM, SIGINT or SIGHUP becomes once its
/// children are killed (common::exec_after_signals): it puts the job it held
/// back in the queue without counting the attempt (capped, as for a lost
/// connection), then dies of the signal as before. Slurm's time limit and
/// preemption, scancel, `systemctl stop` and a pod's eviction are not the
/// job's doing; without this the job waited for the lease to expire and the
/// claim counted, so three preemptions failed it.
void hand_back(Context& ctx, const WorkerArgs& a) {
  // First, and whatever the database does: its tasks would otherwise take
  // the sweep's jobs for hours with nobody watching (each hands back its own).
  if (!a.cancel_slurm_array.empty()) {
    if (auto why = sweep::cancel_slurm_array(a.cancel_slurm_array); why.empty())
      fmt::print("sweep stopped by signal {}: Slurm array {} cancelled; its tasks put their jobs back in the queue\n",
                 a.after_signal, a.cancel_slurm_array);
    else
      fmt::print("sweep stopped by signal {}: could not cancel Slurm array {} ({}); `scancel {}` stops its tasks\n",
                 a.after_signal, a.cancel_slurm_array, why, a.cancel_slurm_array);
  }
  try {
    auto database = ctx.database();
    int n = 0, given_back = 0;
    for (const auto& owner : common::split(a.hand_back_of, ','))  // a sweep's local workers, one by one
      if (!owner.empty()) {
        int given = 0;
        n += db::requeue_jobs_of(database, owner, true, &given);
        given_back += given;
      }
    // Given back at most kMaxGiveBacks times a job: past that the attempt counts, and saying otherwise would
    // hide why a job stopped again and again fails.
    auto attempts =
        given_back == n ? std::string("the attempt not counted")
        : given_back == 0
            ? fmt::format("the attempt counted (a job is given its attempt back {} times at most)", db::kMaxGiveBacks)
            : fmt::format(
                  "the attempt not counted for {} of them; counted for the rest, given back {} "
                  "times already",
                  given_back, db::kMaxGiveBacks);
    if (n > 0)
      fmt::print("worker {} stopped by signal {}: {} job(s) it held put back in the queue, {}\n", a.hand_back_of,
                 a.after_signal, n, attempts);
    else if (a.cancel_slurm_array.empty())  // a Slurm sweep's own workers seldom hold any
      // An external sweep runs none; a local one between jobs held none.
      fmt::print("stopped by signal {}: no job was running here, none to put back\n", a.after_signal);
  } catch (const std::exception& e) {  // the database away: the lease expires instead
    fmt::print("worker {} stopped by signal {}: could not put its job back ({}); its lease expires\n", a.hand_back_of,
               a.after_signal, common::printable(e.what()));
  }
  std::fflush(stdout);
  sigset_t pending;
  sigemptyset(&pending);
  sigaddset(&pending, a.after_signal);
  signal(a.after_signal, SIG_DFL);
  sigprocmask(SIG_UNBLOCK, &pending, nullptr);  // blocked in the handler that exec'd this process
  raise(a.after_signal);
}

}  // namespace

std::vector<std::string> local_owners(int workers) {
  std::vector<std::string> out;
  for (int w = 0; w < std::max(1, workers); ++w) out.push_back(sweep::worker_owner_name(w));
  return out;
}

void hand_back_on_signals(const Context& ctx, const std::vector<std::string>& owners, const std::string& slurm_array) {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return;  // no /proc: the lease expires instead
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (!std::string_view(*e).starts_with("DRIFTWATCH_DB=")) env.emplace_back(*e);
  if (ctx.dsn) env.push_back("DRIFTWATCH_DB=" + *ctx.dsn);
  std::vector<std::string> argv = {self.string(),
                                   "--quiet",
                                   "--data-dir",
                                   ctx.data_dir().string(),
                                   "worker",
                                   "--hand-back-of",
                                   fmt::format("{}", fmt::join(owners, ","))};
  if (!slurm_array.empty()) argv.insert(argv.end(), {"--cancel-slurm-array", slurm_array});
  argv.push_back("--after-signal");
  common::exec_after_signals(argv, env);
}

namespace {

void run_worker(Context& ctx, const WorkerArgs& a) {
  if (!a.hand_back_of.empty()) return hand_back(ctx, a);
  sweep::WorkerOptions o;
  for (const auto& k : common::split(a.kinds, ',')) {  // before the database: a typo is named, not a connection
    auto kind = common::trim(k);
    if (kind != "build" && kind != "eval")
      throw common::Fatal("--kinds: unknown job kind '" + kind + "' (build, eval)");
    o.kinds.push_back(kind);
  }
  // An evaluating worker loads LibTorch now: a missing module stops it here,
  // not each job after its compiler is built, and a worker running for
  // weeks keeps the module of its own build.
  if (o.kinds.empty() || std::ranges::find(o.kinds, "eval") != o.kinds.end()) policy::load_network_runtime();
  // Where every job writes: a file or a read-only directory there would
  // fail each job in seconds, after the worker had started as if healthy.
  common::ensure_writable_dir(ctx.data_dir(), "the data directory");
  for (auto [sub, what] : {std::pair{"cache", "the compile cache"}, std::pair{"worktrees", "the work trees' directory"},
                           std::pair{"eval", "the evaluations' directory"}})
    common::ensure_writable_dir(ctx.data_dir() / sub, what);
  auto database = ctx.database();  // starts the embedded server if needed, migrates
  // Not refused: workers may start before a new project's first sweep. But a
  // typo would wait for ever, claiming nothing, and say nothing.
  if (auto others = projects_if_unknown(database, a.project))
    fmt::print("worker: project {} has no sweep or job in this database yet ({}); waiting for its first sweep\n",
               a.project, others->empty() ? "none has" : "known: " + *others);
  o.target = ctx.target();
  o.project = a.project;
  o.owner = sweep::worker_owner_name(0);
  hand_back_on_signals(ctx, {o.owner});
  o.data_dir = ctx.data_dir();
  o.jobs = sweep::jobs_or_cores(a.jobs);
  o.lease_seconds = a.lease;
  o.max_jobs = a.max_jobs;
  o.idle_exit = a.idle_exit < 0 ? std::numeric_limits<double>::infinity() : a.idle_exit;
  o.retry_backoff = a.retry_backoff;
  // Flushed as the job lines are: a worker's log (a file, journald) must
  // say at once that it lost the database, not after it came back.
  o.log = [](const std::string& line) {
    fmt::print("{}\n", common::printable(line));
    std::fflush(stdout);
  };
  o.on_job = [&ctx](const sweep::JobEvent& ev) {
    if (!ctx.quiet)
      fmt::print("{} {}: {} ({})\n", ev.kind, ev.state, common::printable(ev.what), common::format_seconds(ev.seconds));
    std::fflush(stdout);
  };
  if (!ctx.quiet)
    fmt::print("worker {} on {}: claiming {} jobs of {}\n", o.owner, o.target.display, a.kinds,
               a.project.empty() ? "every project" : "project " + a.project);
  // A farm's unit that forgot the database would look healthy, serving a
  // queue nobody fills.
  if (ctx.embedded())
    fmt::print(
        "worker: no --db or $DRIFTWATCH_DB: this is the embedded database of {}, which no other machine's "
        "sweep reaches; on a farm give the shared one\n",
        ctx.data_dir().string());
  std::fflush(stdout);
  auto r = sweep::run_worker(o);
  // Quiet: said only when something went wrong, which a log must not lose.
  if (!ctx.quiet || r.failed > 0 || r.lost > 0)
    fmt::print("worker {}: {} done, {} skipped, {} failed, {} attempt(s) retried later, {} lease(s) lost\n", o.owner,
               r.done, r.skipped, r.failed, r.retried, r.lost);
}

struct JobsArgs {
  int limit = 1000;
  std::string project, state;
  bool json = false, all = false, all_queued = false;
  long long id = 0, sweep_id = 0;
  std::string by;
  ProjectArgs config;
};

void run_list(Context& ctx, const JobsArgs& a) {
  a.config.load_if_any(ctx);
  db::JobFilter f;
  f.project = a.project;
  if (!a.state.empty()) {
    f.states = common::split(a.state, ',');
    // A typo would match nothing, and `jobs --json` would report no failed job.
    for (const auto& s : f.states)
      if (s != db::kJobQueued && s != db::kJobRunning && s != db::kJobDone && s != db::kJobFailed &&
          s != db::kJobSkipped)
        throw common::Fatal("jobs --state: unknown state '" + s + "' (queued, running, done, failed, skipped)");
  } else if (!a.all) f.states = {db::kJobQueued, db::kJobRunning, db::kJobFailed};
  if (a.sweep_id) f.sweep_id = a.sweep_id;
  f.limit = a.limit > 0 ? a.limit + 1 : 0;  // one more: whether any were left out
  auto database = ctx.database();
  // As for a typo in --state: `jobs --json` would report no failed job.
  if (auto others = projects_if_unknown(database, a.project))
    throw common::Fatal("jobs --project: no sweep or job of project '" + a.project + "' in this database (" +
                        (others->empty() ? std::string("none has any") : "known: " + *others) + ")");
  if (a.sweep_id && !db::sweep_exists(database, a.sweep_id, a.project))
    throw common::Fatal(fmt::format("jobs --sweep: no sweep {}{}", a.sweep_id,
                                    a.project.empty() ? "" : " of project " + a.project));
  auto rows = db::list_jobs(database, f);
  bool truncated = a.limit > 0 && static_cast<int>(rows.size()) > a.limit;
  if (truncated) rows.resize(static_cast<std::size_t>(a.limit));
  auto counts = db::count_project_jobs(database, a.project, a.sweep_id);
  fmt::print("{}", a.json ? sweep::render_jobs_json(rows, counts, truncated)
                          : sweep::render_jobs_table(rows, counts, a.project, truncated, a.sweep_id));
}

/// --project, else the project file's name (--config, or ./driftwatch.toml
/// even where --db or $DRIFTWATCH_DB names the database, as on a farm): a
/// shared database holds other teams' jobs, and `jobs cancel` run in one
/// project's directory must not reach them. "" when there is no project.
std::string project_of(Context& ctx, const JobsArgs& a) {
  // First, whatever --project says: the file names the database when no
  // --db or $DRIFTWATCH_DB does.
  auto file = a.config.load_if_any(ctx);
  if (!a.project.empty()) return a.project;
  if (file) return file->name;
  std::error_code ec;
  if (!std::filesystem::exists("driftwatch.toml", ec)) return "";
  return a.config.load(ctx).name;
}

void run_retry(Context& ctx, JobsArgs a) {
  a.project = project_of(ctx, a);
  auto database = ctx.database();
  // As cancel: a mistyped id must not queue another project's job again.
  if (!a.project.empty() && db::job_state(database, a.id) && !db::job_of_project(database, a.id, a.project))
    throw common::Fatal("job " + std::to_string(a.id) + " is not of project " + a.project);
  auto ids = db::retry_job_now(database, a.id).take();
  std::vector<std::string> with;
  int waited = 0;
  for (std::size_t i = 1; i < ids.size(); ++i) {
    auto s = db::job_state(database, ids[i]);
    if (s && s->kind == "build")
      with.push_back(fmt::format("its build (job {}), which did not finish", ids[i]));
    else
      ++waited;
  }
  if (waited > 0) with.push_back(fmt::format("{} evaluation(s) that waited for it", waited));
  fmt::print("job {} is queued again{}\n", a.id,
             with.empty() ? "" : ", with " + fmt::format("{}", fmt::join(with, " and ")));
}

void run_cancel(Context& ctx, JobsArgs a) {
  int ways = (a.id != 0) + (a.sweep_id != 0) + a.all_queued;
  if (ways != 1) throw common::Fatal("jobs cancel: give exactly one of ID, --sweep S or --all-queued");
  a.project = project_of(ctx, a);
  auto database = ctx.database();
  auto reason = db::kCancelledPrefix + (a.by.empty() ? common::login_name() : a.by);
  db::JobFilter f;
  f.project = a.project;
  if (a.sweep_id) {
    f.sweep_id = a.sweep_id;
    if (!db::sweep_exists(database, a.sweep_id, a.project)) {
      auto of = a.project.empty() ? std::string() : " of project " + a.project;
      throw common::Fatal("no sweep " + std::to_string(a.sweep_id) + of + "; `driftwatch jobs --all` lists jobs by sweep");
    }
  }
  if (a.all_queued) f.states = {db::kJobQueued};
  std::optional<db::Id> one;
  if (a.id) {
    one = a.id;
    auto st = db::job_state(database, a.id);
    if (!st) throw common::Fatal("no job " + std::to_string(a.id));
    // Cancelling nothing and saying "cancelled 0" would read as done.
    if (!a.project.empty() && !db::job_of_project(database, a.id, a.project))
      throw common::Fatal("job " + std::to_string(a.id) + " is not of project " + a.project);
    if (st->state != db::kJobQueued && st->state != db::kJobRunning)
      throw common::Fatal("job " + std::to_string(a.id) + " is " + st->state + "; only queued or running jobs are cancelled");
  }
  int running = 0;
  auto ids = db::cancel_jobs(database, f, one, reason, &running);
  // A running job's worker learns of it when it next renews its lease.
  fmt::print("cancelled {} job(s) {} ({}){}; `driftwatch jobs retry ID` or the next sweep queues them again\n",
             ids.size(), a.project.empty() ? "of every project" : "of project " + a.project, reason,
             running == 0 ? ""
                          : fmt::format("; {} of them running: {} worker stops its build or compiles when it next "
                                        "renews the lease (a third of the lease, 40 s by default)",
                                        running, running == 1 ? "its" : "each one's"));
}

}  // namespace

void attach_worker(CLI::App& sub, Context& ctx) {
  auto a = std::make_shared<WorkerArgs>();
  sub.add_option("--project", a->project, "claim only this project's jobs (default: every project)");
  sub.add_option("--kinds", a->kinds, "job kinds to claim, comma-separated (default build,eval)");
  sub.add_option("-j,--jobs", a->jobs, "parallel compiles within a job (default: one per core)")->check(CLI::Range(0, 1024));
  sub.add_option("--max-jobs", a->max_jobs, "exit after this many jobs (default: no limit)")
      ->check(CLI::Range(0, 100000000));
  sub.add_option("--idle-exit", a->idle_exit, "exit after this many seconds without runnable work (default: never)")
      ->check(cli::Finite)->check(CLI::Range(0.0, 1e9));
  sub.add_option("--lease", a->lease, "lease in seconds, renewed every third of it (default 120)")
      ->check(CLI::Range(3, 86400));
  sub.add_option("--retry-backoff", a->retry_backoff,
                 "seconds before a failed job's second attempt, doubled for each further one (default 10)")
      ->check(cli::Finite)->check(CLI::Range(0.0, 1e9));
  sub.add_option("--hand-back-of", a->hand_back_of)->group("");  // hidden: see hand_back()
  sub.add_option("--after-signal", a->after_signal)->group("")->check(CLI::Range(1, 64));
  sub.add_option("--cancel-slurm-array", a->cancel_slurm_array)->group("");  // hidden: see hand_back()
  sub.footer(
      "A worker needs the database (--db or DRIFTWATCH_DB) and read access to the project's repository, policy "
      "and suites at the paths the sweep planned them with (see docs/farm.md). Killed at any moment, it loses "
      "nothing: its lease expires and another worker takes the job. Stopped by SIGTERM, SIGINT or SIGHUP "
      "(scancel, a Slurm time limit or preemption, systemctl stop), it puts its job back at once, the attempt "
      "not counted.");
  sub.callback([&ctx, a] { run_worker(ctx, *a); });
}

void attach_jobs(CLI::App& sub, Context& ctx) {
  auto a = std::make_shared<JobsArgs>();
  sub.add_option("--project", a->project, "only this project's jobs");
  sub.add_flag("--json", a->json, "machine-readable output (for monitoring)");
  sub.add_flag("--all", a->all, "done and skipped jobs too");
  sub.add_option("--state", a->state, "only jobs in these states (comma-separated)");
  sub.add_option("--limit", a->limit, "list at most N jobs, and say when more match (default 1000; 0: all)")
      ->check(CLI::Range(0, 100000000));
  sub.add_option("--sweep", a->sweep_id, "only the jobs of a sweep (the last that planned or ran each again)");
  // The project file's database (else the embedded one): the jobs of every
  // project in it, unless --project; retry and cancel reach its project's only.
  a->config.attach(sub);
  auto* retry = sub.add_subcommand(
      "retry",
      "queue a failed job, or a build that gave no compiler (built again from scratch), again, attempts reset");
  retry->add_option("id", a->id, "the job")->required();
  retry->callback([&ctx, a] { run_retry(ctx, *a); });
  auto* cancel = sub.add_subcommand(
      "cancel",
      "cancel queued or running jobs (a running one's worker stops it when it next renews the lease): one, a "
      "sweep's, or every queued one");
  cancel->add_option("id", a->id, "the job");
  cancel->add_option("--sweep", a->sweep_id, "the jobs of a sweep (the last that planned or ran each again)");
  cancel->add_flag("--all-queued", a->all_queued, "every queued job (of --project, if given)");
  cancel->add_option("--by", a->by, "who (default: $USER)");
  cancel->callback([&ctx, a] { run_cancel(ctx, *a); });
  sub.callback([&ctx, a, &sub] {
    if (sub.get_subcommands().empty()) run_list(ctx, *a);
  });
}

}  // namespace cli
