// driftwatch init and sweep: a project file, and sweeps of what it tracks.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"
#include "cli/drift_output.h"
#include "cli/project.h"
#include "common/atomic_file.h"
#include "common/data_dir.h"
#include "common/text.h"
#include "policy/model.h"
#include "sweep/sweep.h"
#include "tracker/git.h"
#include "tracker/sampling.h"

namespace cli {
namespace fs = std::filesystem;

namespace {

struct InitArgs {
  std::string dir = ".", repo, policy = DRIFTWATCH_SHIPPED_POLICY, name;
  bool force = false;
};

void run_init(const InitArgs& a) {
  auto dir = fs::absolute(a.dir).lexically_normal();
  if (!dir.has_filename()) dir = dir.parent_path();  // "proj/": the project's name is proj
  auto file = dir / "driftwatch.toml";
  if (fs::exists(file) && !a.force)
    throw common::Fatal(file.string() + " exists; not overwritten (use --force to replace it)");
  // The file reads relative paths from its own directory: paths given here
  // are taken from the current one, so they are written absolute.
  auto repo = a.repo.empty() ? std::string("../llvm-project") : fs::absolute(a.repo).lexically_normal().string();
  auto policy = fs::absolute(a.policy).lexically_normal().string();
  require_shipped_policy_if_default(a.policy);
  if (!fs::is_regular_file(policy)) throw common::Fatal("--policy " + a.policy + ": no such file");
  // A truncated, corrupt or foreign file is refused now, not at the first
  // sweep (which also loads its network, before any work).
  const auto policy_meta = policy::read_policy_metadata(policy).take();
  // An llvm-project checkout gets its recipe and a year of history: the
  // sample compiler's recipe cannot build it, and a weekly grid over all of
  // LLVM's history (from 2001) would build hundreds of check-ins that no
  // LLVM 19 bitcode suite can be read by. HEAD tells llvm-project (a
  // checkout at a release tag is llvm-project too); the tracked branch dates
  // the range.
  std::string recipe = "sample-compiler", since, since_why, branch;
  if (!a.repo.empty()) {
    auto git = tracker::GitRepo::open(repo).take();
    auto llvm = git.has_file("HEAD", "llvm/CMakeLists.txt");
    if (llvm && *llvm) {
      recipe = "llvm-project";
      // The nightly `git fetch` moves the remote-tracking branch, not the
      // local one: tracking HEAD, every night would find nothing new. Its
      // tip, not HEAD's (a release tag, a stale local main), dates the range.
      branch = git.upstream_branch();
      if (auto newest = git.commit(branch.empty() ? "HEAD" : "refs/remotes/" + branch)) {
        auto from = newest->time - 365 * 86400;
        since_why = branch.empty() ? "a year before its newest check-in" : "a year before the tip of " + branch;
        // The policy's training check-in is the baseline drift, `decide` and
        // the report measure from: a range starting after it would never
        // measure it, and LLVM builds of the months before it would be spent
        // on history the policy was trained after.
        const auto& trained = policy_meta.compiler_commit;
        if (auto t = trained.empty() ? common::Result<tracker::CommitInfo>(common::Error{""}) : git.commit(trained)) {
          from = t->time;
          since_why = "the policy's training check-in " + t->sha.substr(0, 12);
        }
        since = tracker::format_date(from);
      }
    }
  }
  common::ensure_writable_dir(dir, "project directory");
  auto name = a.name.empty() ? dir.filename().string() : a.name;
  auto text = sweep::project_file_template(name, repo, policy, recipe, since, branch);
  // The template must always be a valid project file: check before writing.
  sweep::parse_project_file(text, file.string(), dir).take();
  common::write_file_atomically(file, text).take();
  if (recipe == "llvm-project")
    fmt::print("{} is an llvm-project checkout: recipe \"llvm-project\", sampling since {} ({}){}\n", repo,
               since.empty() ? "its first check-in" : since, since.empty() ? "its newest could not be read" : since_why,
               branch.empty() ? "" : ", tracking " + branch + " (kept current by `git fetch`)");
  // Only what is still to fill in is named: with --repo given, [compiler]
  // repo already points at the checkout.
  fmt::print("wrote {}: {}[suites], then run `driftwatch sweep`\n", file.string(),
             a.repo.empty() ? "edit [compiler] repo and " : "check ");
}

struct SweepArgs {
  ProjectArgs project;
  bool only_new = false;
  std::string every, since;
  int jobs = 0, workers = 1;
  std::string engine = "local", partition;
  int stall_timeout = -1;  ///< seconds; -1: the default (SweepOptions)
};

void print_summary(const sweep::SweepReport& r, bool quiet) {
  // What failed to go out last time is tried again on a quiet night too.
  if (r.nothing_new) return print_notifications(r.drift.notifications);
  // No check-in planned: its jobs were earlier sweeps' (and bisection's).
  fmt::print("sweep #{}: {}; jobs: {} done, {} skipped (no build to evaluate), {} failed; {}\n", r.sweep_id,
             r.checkins > 0 ? fmt::format("{} check-in(s)", r.checkins) : std::string("no new check-in"), r.jobs.done,
             r.jobs.skipped, r.jobs.failed, common::format_seconds(r.seconds));
  for (const auto& f : r.failures) fmt::print("  failed: {}\n", f);
  // Recorded as broken, not failed; but a quiet night's mail is all people read.
  for (const auto& b : r.did_not_build) fmt::print("  did not build: {}\n", b);
  // Recorded as the check-in's, so no sweep builds it again: a failure the
  // machine caused (a linker killed, a disk error) is put right by a person.
  if (!r.did_not_build.empty())
    fmt::print(
        "  (where the machine failed it, not the check-in: `driftwatch jobs retry <build job>` builds it again)\n");
  const auto& t = r.time;
  // Jobs that ran side by side (workers) add up to more than the sweep's
  // time: no overhead can be read off that, and "0.000×" would claim one.
  if (t.jobs > 0 && t.jobs > r.seconds)
    fmt::print(
        "time in jobs: checkout {}, build {}, evaluate {}, store {}; {} of job time in the sweep's {}, run side "
        "by side\n",
        common::format_seconds(t.checkout), common::format_seconds(t.build), common::format_seconds(t.evaluate),
        common::format_seconds(t.store), common::format_seconds(t.jobs), common::format_seconds(r.seconds));
  else if (t.jobs > 0)
    fmt::print(
        "time in jobs: checkout {}, build {}, evaluate {}, store {}; the sweep's own overhead (planning, "
        "claims, analysis) {} = {:.3f}× the jobs' time\n",
        common::format_seconds(t.checkout), common::format_seconds(t.build), common::format_seconds(t.evaluate),
        common::format_seconds(t.store), common::format_seconds(r.seconds - t.jobs), (r.seconds - t.jobs) / t.jobs);
  print_drift(r.drift, quiet);
}

void run_sweep(Context& ctx, const SweepArgs& a) {
  auto project = a.project.load(ctx);
  // Bad flags are refused before the database starts.
  if (!a.every.empty()) (void)tracker::parse_every(a.every).take();
  if (!a.since.empty()) (void)tracker::parse_date(a.since).take();
  sweep::SweepOptions o;
  auto engine = sweep::parse_engine(a.engine);
  if (!engine) throw common::Fatal("--engine: unknown engine '" + a.engine + "' (local, external, slurm)");
  o.engine = *engine;
  if (!a.partition.empty() && o.engine != sweep::Engine::Slurm)
    throw common::Fatal("--partition needs --engine slurm");
  o.partition = a.partition;
  if (a.workers != 1 && o.engine == sweep::Engine::External)
    throw common::Fatal(
        "--workers starts local threads or Slurm tasks: with --engine external, start `driftwatch "
        "worker` processes where the jobs should run");
  if (a.stall_timeout >= 0 && o.engine == sweep::Engine::Local)
    throw common::Fatal("--stall-timeout needs --engine slurm or external (local workers do not stall)");
  if (a.stall_timeout >= 0) o.stall = std::chrono::seconds(a.stall_timeout);
  auto database = ctx.database();  // starts the embedded server and migrates
  sweep::Progress progress(sweep::stderr_is_terminal(), ctx.quiet);
  o.project = project;
  o.target = ctx.target();
  o.data_dir = ctx.data_dir();
  o.only_new = a.only_new;
  o.every = a.every;
  o.since = a.since;
  o.jobs = a.jobs;
  o.workers = a.workers;
  o.dsn = o.target.conninfo;
  o.progress = &progress;
  auto owners = local_owners(a.workers);
  hand_back_on_signals(ctx, owners);
  o.on_slurm_array = [&ctx, owners](const std::string& id) { hand_back_on_signals(ctx, owners, id); };
  sweep::SweepReport report;
  try {
    report = sweep::run_sweep(o);
  } catch (const sweep::SweepBusy& e) {
    fmt::print(stderr, "driftwatch: {}\n", e.what());
    ctx.exit_code = kExitSweepBusy;
    return;
  }
  print_summary(report, ctx.quiet);
  // `failures` also names jobs this sweep's workers ran for an earlier,
  // interrupted sweep or bisection of the project: they failed all the same.
  if (report.jobs.failed > 0 || !report.failures.empty()) ctx.exit_code = 1;
  if (report_stuck_notifications(report.drift.notifications)) ctx.exit_code = 1;
  if (!report.stale_tip.empty()) {
    std::fflush(stdout);  // the summary first: this is the run's last word
    fmt::print(stderr, "driftwatch: {}\n", report.stale_tip);
    ctx.exit_code = 1;
  }
}

}  // namespace

void attach_init(CLI::App& sub, Context&) {
  auto a = std::make_shared<InitArgs>();
  sub.add_option("dir", a->dir, "where to write driftwatch.toml (default: .)");
  sub.add_option("--repo", a->repo, "the compiler's git repository");
  sub.add_option("--policy", a->policy, "the frozen policy (default: the shipped sample policy)");
  sub.add_option("--name", a->name, "the project's name (default: the directory's name)");
  sub.add_flag("--force", a->force, "replace an existing driftwatch.toml");
  sub.callback([a] { run_init(*a); });
}

void attach_sweep(CLI::App& sub, Context& ctx) {
  auto a = std::make_shared<SweepArgs>();
  a->project.attach(sub);
  sub.add_flag("--new", a->only_new, "only check-ins after the last swept one (the nightly use)");
  sub.add_option("--every", a->every, "override the project's sampling: N, Nd, Nw, Nm");
  sub.add_option("--since", a->since, "override the project's start date (YYYY-MM-DD)");
  sub.add_option("-j,--jobs", a->jobs,
                 "parallel compiles (default: the project's, else the cores shared by local workers; a build, one at a "
                 "time, takes them all)")
      ->check(CLI::Range(0, 1024));
  sub.add_option("--workers", a->workers, "workers claiming jobs: local threads, or Slurm array tasks (default 1)")
      ->check(CLI::Range(1, 1024));
  sub.add_option("--engine", a->engine,
                 "where jobs run: local (this process's workers), external (`driftwatch worker`s started elsewhere), "
                 "slurm (an sbatch array the sweep submits and follows)");
  sub.add_option("--partition", a->partition, "Slurm partition for --engine slurm");
  sub.add_option("--stall-timeout", a->stall_timeout,
                 "--engine slurm or external: fail when no job has run or finished for this many seconds, naming "
                 "why Slurm's tasks wait (default 3600; 0 waits however long); the jobs stay queued")
      ->check(CLI::Range(0, 100000000));
  sub.footer(
      "Exit status: 0 swept (check-ins that do not build are results, not errors); 1 some jobs failed (retried by "
      "the next sweep), an alert's delivery failed on a third attempt, or the tracked branch is older than "
      "sampling.stale_after; 2 bad input or a database that stayed away; 3 another sweep of the project is running. "
      "Ctrl-C or SIGTERM stops it at once with its builds and compiles (and cancels its Slurm array); a rerun "
      "continues where it stopped.");
  sub.callback([&ctx, a] { run_sweep(ctx, *a); });
}

}  // namespace cli
