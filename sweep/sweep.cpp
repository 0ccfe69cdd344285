#include "sweep/sweep.h"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <regex>
#include <set>
#include <thread>

#include "builder/recipe.h"
#include "common/text.h"
#include "db/jobs.h"
#include "policy/model.h"
#include "sweep/compiler_build.h"
#include "sweep/lineage.h"
#include "sweep/notify.h"
#include "sweep/plan.h"
#include "sweep/recording.h"
#include "sweep/slurm.h"
#include "sweep/stall_watch.h"
#include "sweep/suite_selection.h"
#include "sweep/timeline.h"
#include "sweep/worker.h"
#include "tracker/git.h"
#include "tracker/sampling.h"

namespace sweep {
namespace fs = std::filesystem;

namespace {

/// The project's `until` as a time (nullopt: none); a bare date means the whole day.
common::Result<std::optional<std::int64_t>> until_time(const ProjectFile& p) {
  if (p.until.empty()) return std::optional<std::int64_t>();
  auto t = tracker::parse_date(p.until);
  if (!t) return t.error();
  return std::optional<std::int64_t>(p.until.size() == 10 ? *t + 86399 : *t);
}

}  // namespace

common::Result<std::vector<std::string>> sweep_checkins(const ProjectFile& p, const std::string& every,
                                                        const std::string& since,
                                                        const std::optional<std::string>& after,
                                                        const std::string& baseline, bool nightly) {
  auto repo = tracker::GitRepo::open(p.repo);
  if (!repo) return repo.error();
  auto tracked = repo->tracked(p.branch);
  if (!tracked) return tracked.error();
  std::string tip = *tracked;
  if (!repo->resolve(tip)) return common::Error{"unknown branch '" + tip + "' in " + p.repo};
  std::optional<std::string> from = p.from.empty() ? std::nullopt : std::optional(p.from);
  std::string after_sha;  // the last swept check-in: the new range starts after it
  if (after) {
    auto resolved = repo->resolve(*after);
    if (!resolved)
      return common::Error{"the last swept check-in " + after->substr(0, 12) + " is no longer in " + p.repo +
                           " (history rewritten?); nothing was deleted: sweep without --new to measure the range again"};
    after_sha = *resolved;
  }
  std::optional<std::int64_t> since_time;
  if (!since.empty()) {
    auto t = tracker::parse_date(since);
    if (!t) return t.error();
    since_time = *t;
  }
  // With --new too the whole range is sampled, then cut after the last swept
  // check-in: nightly sweeps keep the grid one sweep of the range would have.
  // A walk leaves a damaged tag out; sampling by tags would then leave its check-in out.
  if (p.tags)
    if (auto tags = repo->tags(); !tags) return tags.error();
  auto history = repo->first_parent_history(tip, from, since_time);
  if (!history) return history.error();
  auto swept = std::find_if(history->begin(), history->end(), [&](const auto& c) { return c.sha == after_sha; });
  // Still in the branch's history, through a merge's other parent: a merge
  // made onto the tracked branch with its parents swapped (`git pull` of the
  // upstream into local work, then pushed) puts the local line first.
  if (after && swept == history->end())
    for (const auto& c : *history)
      for (std::size_t k = 1; k < c.parents.size(); ++k)
        if (auto r = repo->reaches(c.parents[k], after_sha); r && *r)
          return common::Error{"the last swept check-in " + after->substr(0, 12) + " is on " + tip +
                               " only through the second parent of merge " + c.short_sha() + " (" + c.subject +
                               "): its first parent is another line, which the first-parent walk follows from "
                               "there (a merge with its parents swapped, as `git pull` makes); nothing was deleted: "
                               "sweep without --new to measure the range along that line"};
  if (after && swept == history->end())
    return common::Error{"the last swept check-in " + after->substr(0, 12) + " is not on the first-parent line of " +
                         tip + " any more (force-pushed?), or the project's from/since moved past it; nothing was "
                         "deleted: sweep without --new to measure the range again"};
  auto until = until_time(p);
  if (!until) return until.error();
  std::vector<tracker::CommitInfo> window;
  for (auto& c : *history)
    if (!*until || c.time <= **until) window.push_back(c);
  tracker::SamplingRule rule;
  if (!every.empty()) {
    auto e = tracker::parse_every(every);
    if (!e) return e.error();
    rule.every = *e;
  }
  rule.tags = p.tags;
  // A nightly sweep's newest check-in is not the last of its week yet,
  // unless the range ends at an `until` already past.
  auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  bool until_past = *until && **until < now;
  rule.open_end = (after || nightly) && !until_past && !window.empty() && window.back().sha == history->back().sha;
  rule.now = now;
  // With --new: the window's check-ins after the last swept one (none when
  // `until` ends the window before it).
  std::size_t first_new = 0;
  if (after) {
    first_new = window.size();
    for (std::size_t i = 0; i < window.size(); ++i)
      if (window[i].sha == after_sha) first_new = i + 1;
  }
  auto picked = tracker::sample(window, rule);
  // The baseline (the policy's training check-in) is what drift is measured
  // from: measure it too when it lies in the window, in first-parent order.
  if (!baseline.empty() && !after) {
    auto at = std::find_if(window.begin(), window.end(), [&](const auto& c) { return c.sha == baseline; });
    auto i = static_cast<std::size_t>(at - window.begin());
    if (at != window.end() && !std::binary_search(picked.begin(), picked.end(), i))
      picked.insert(std::upper_bound(picked.begin(), picked.end(), i), i);
  }
  std::vector<std::string> out;
  for (auto i : picked)
    if (i >= first_new) out.push_back(window[i].sha);
  return out;
}

std::size_t project_range_end(const ProjectFile& p, const std::vector<tracker::CommitInfo>& history,
                              const std::string& trained) {
  auto until = until_time(p);
  if (!until || !*until) return history.size();
  std::size_t end = 0;
  for (std::size_t i = 0; i < history.size(); ++i)
    if (history[i].time <= **until || (!trained.empty() && history[i].sha == trained)) end = i + 1;
  return end;
}

std::size_t project_range_start(const ProjectFile& p, const std::vector<tracker::CommitInfo>& history,
                                std::optional<std::size_t> trained_at) {
  std::size_t start = trained_at.value_or(0);
  auto repo = tracker::GitRepo::open(p.repo);
  if (!repo) return start;
  auto tip = repo->tracked(p.branch);
  if (!tip) return start;
  std::optional<std::int64_t> since;
  if (!p.since.empty())
    if (auto t = tracker::parse_date(p.since)) since = *t;
  auto range = repo->first_parent_history(*tip, p.from.empty() ? std::nullopt : std::optional(p.from), since);
  if (!range) return start;
  if (range->empty()) return history.size();  // a range that selects nothing: none of it counts
  auto first = std::find_if(history.begin(), history.end(), [&](const auto& c) { return c.sha == range->front().sha; });
  if (first == history.end()) return start;
  return std::max(start, static_cast<std::size_t>(first - history.begin()));
}

void require_range_selects(const ProjectFile& p, const std::vector<tracker::CommitInfo>& history, std::size_t start,
                           const char* what) {
  if (history.empty() || start < history.size()) return;
  throw common::Fatal("the project's range selects no check-in of " + p.repo + " (from = \"" + p.from +
                      "\", since = \"" + p.since + "\", until = \"" + p.until + "\"): " + what +
                      " reads nothing; widen it in the project file");
}

std::optional<Engine> parse_engine(const std::string& name) {
  if (name == "local") return Engine::Local;
  if (name == "external") return Engine::External;
  if (name == "slurm") return Engine::Slurm;
  return std::nullopt;
}

namespace {

/// "3.1 days" from two days on, "36.0 h" from two hours, else "45 min": a
/// tip's age against stale_after.
std::string days_or_hours(std::int64_t seconds) {
  if (seconds >= 2 * 86400) return fmt::format("{:.1f} days", seconds / 86400.0);
  if (seconds >= 2 * 3600) return fmt::format("{:.1f} h", seconds / 3600.0);
  return fmt::format("{} min", (seconds + 59) / 60);
}

/// The settings a project's grid is planned with, as people read them: a
/// finished sweep records them, and `--new` keeps its grid while they hold.
std::string sampling_settings(const ProjectFile& p) {
  return fmt::format("branch \"{}\", from \"{}\", since \"{}\", until \"{}\", every \"{}\", tags {}", p.branch, p.from,
                     p.since, p.until, p.every, p.tags ? "true" : "false");
}

constexpr const char* kToolchainSettings = "toolchains";

/// A toolchains-only project's "grid": its list as the project file gives
/// it, recorded by a finished sweep so that `--new` sees it edited.
std::string toolchain_settings(const ProjectFile& p) {
  std::string out = kToolchainSettings;
  // In line order: the file's own order means nothing, a move in it no edit.
  for (const auto& t : toolchains_in_order(p)) out += fmt::format(" [{} {} {}]", t.label, t.date, t.dir.string());
  return out;
}

/// The last sweep's grid (`last`, as sampling_settings wrote it) is this
/// project's but for an `until` moved later, or taken off: the grid up to
/// the last sweep's head is the same, and what lies after it is what --new
/// plans anyway (a nightly over a fixed history, moving `until` each night).
bool only_until_moved_later(const std::string& last, const ProjectFile& p) {
  static const std::regex until_of(R"re(until "([^"]*)")re");
  std::smatch m;
  if (!std::regex_search(last, m, until_of)) return false;
  auto before = p;
  before.until = m[1].str();
  if (sampling_settings(before) != last || before.until.empty()) return false;
  if (p.until.empty()) return true;
  auto was = until_time(before), now = until_time(p);
  return was && now && *was && *now && **now >= **was;
}

/// The queue's jobs of check-in `c` under `in`: its build's, then one
/// evaluation's per suite.
std::vector<std::string> checkin_job_keys(const PlanInput& in, const PlannedCheckin& c) {
  std::vector<std::string> keys{build_job_key(in, c)};
  for (const auto& s : in.suites) keys.push_back(eval_job_key(in, c, s));
  return keys;
}

/// What the queue says of a check-in (`states` from db::job_states of its
/// checkin_job_keys): whether its build is done, and gave a compiler, and
/// whether every suite has an evaluation job of `in`'s policy.
struct CheckinInQueue {
  bool did_not_build = false, gave_compiler = false, every_suite_evaluated = false;
};

CheckinInQueue in_queue(const std::map<std::string, db::JobStateAndOutcome>& states, const PlanInput& in,
                        const PlannedCheckin& c) {
  auto keys = checkin_job_keys(in, c);
  CheckinInQueue q;
  if (auto built = states.find(keys.front()); built != states.end() && built->second.state == db::kJobDone) {
    q.gave_compiler = built->second.outcome == "ok";
    q.did_not_build = !q.gave_compiler;
  }
  q.every_suite_evaluated =
      std::all_of(keys.begin() + 1, keys.end(), [&](const auto& k) { return states.count(k) > 0; });
  return q;
}

/// Every suite of `in` has an evaluation job of its policy at `sha`, or
/// `sha` did not build under this recipe (nothing there to measure).
bool evaluated_here(db::Database& db, const PlanInput& in, const std::string& sha) {
  PlannedCheckin c{sha, "", "", 0};
  auto q = in_queue(db::job_states(db, checkin_job_keys(in, c)), in, c);
  return q.did_not_build || q.every_suite_evaluated;
}

/// Of `grid`, from `baseline` on (the whole grid when it is not on it), the
/// check-ins `in` does not plan already whose build under this recipe gave
/// a compiler but which some suite has no evaluation job of this policy at
/// (a broken check-in has nothing to measure: it is not counted).
std::vector<PlannedCheckin> unmeasured_on_grid(db::Database& db, const PlanInput& in,
                                               const std::vector<std::string>& grid, const std::string& baseline) {
  std::set<std::string> planned;
  for (const auto& c : in.checkins) planned.insert(c.sha);
  auto from = baseline.empty() ? grid.end() : std::find(grid.begin(), grid.end(), baseline);
  std::vector<PlannedCheckin> candidates;
  std::vector<std::string> keys;
  for (auto it = from == grid.end() ? grid.begin() : from; it != grid.end(); ++it) {
    if (planned.count(*it)) continue;
    candidates.push_back({*it, "", "", 0});
    auto own = checkin_job_keys(in, candidates.back());
    keys.insert(keys.end(), own.begin(), own.end());
  }
  auto states = db::job_states(db, keys);
  std::vector<PlannedCheckin> out;
  for (const auto& c : candidates)
    if (auto q = in_queue(states, in, c); q.gave_compiler && !q.every_suite_evaluated) out.push_back(c);
  return out;
}

void say(const SweepOptions& o, const std::string& text) {
  if (o.progress) o.progress->line(text);
}

/// What the sweep is doing, which a quiet (-q) nightly leaves out: its
/// summary at the end says it again.
void note(const SweepOptions& o, const std::string& text) {
  if (o.progress) o.progress->note(text);
}

std::vector<PlannedCheckin> toolchain_checkins(const ProjectFile& p) {
  std::vector<PlannedCheckin> out;
  for (const auto& t : toolchains_in_order(p)) {
    std::int64_t time = 0;
    if (!t.date.empty()) time = tracker::parse_date(t.date).take();
    out.push_back({toolchain_id(t.dir), t.dir.string(), t.label, time});
  }
  return out;
}

/// Hands back the jobs of this host's sweeps and workers that died (SIGKILL)
/// without waiting for their leases to expire. Not those of a boot before
/// this one (common::pid_namespace): their leases expire.
void requeue_dead_local_workers(db::Database& db, const std::string& project, const SweepOptions& o) {
  for (const auto& owner : db::running_job_owners(db, project))
    if (owner_is_dead_here(owner)) {
      int n = db::requeue_jobs_of(db, owner, false);
      say(o, fmt::format("took back {} job(s) of {}, which is no longer running", n, owner));
    }
}

fs::path self_binary() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path("driftwatch") : p;
}

/// Keeps a Slurm array of workers going while jobs remain: submits one, and
/// another when the last ended with work left (bisection adds jobs late).
class SlurmFollower {
 public:
  SlurmFollower(const SweepOptions& o, int jobs_per_worker) : o_(o), watch_(o.stall) {
    spec_.driftwatch = self_binary().string();
    spec_.data_dir = fs::absolute(o.data_dir);
    spec_.project = o.project.name;
    spec_.partition = o.partition;
    spec_.tasks = std::max(1, o.workers);
    spec_.jobs = jobs_per_worker;
    spec_.retry_backoff = o.project.retry_backoff;
    // A task waits out a job's longest backoff (doubled once: three
    // attempts), and the grace a machine it failed on gives the others,
    // without taking it for the end of the work.
    spec_.idle_exit = std::max(spec_.idle_exit, 2 * spec_.retry_backoff + db::kFailedHostGraceSeconds + 10);
    spec_.log_dir = spec_.data_dir / "slurm" / o.project.name;
  }
  ~SlurmFollower() {
    if (array_) array_->cancel();  // every job is finished, or the sweep is going away
  }
  void operator()(const db::JobCounts& counts, const std::vector<db::Id>& ids) {
    if (array_) {
      auto active = array_->active();
      if (!active) {
        // slurmctld times out now and then under load: a failed poll is no
        // reason to cancel hours of running builds; only a lasting outage is.
        auto now = StallWatch::Clock::now();
        if (!squeue_failing_since_) squeue_failing_since_ = now;
        auto failing = std::chrono::duration_cast<std::chrono::seconds>(now - *squeue_failing_since_);
        if (failing > std::max(o_.stall, std::chrono::seconds(300)))
          throw common::Fatal(fmt::format("squeue has failed for {} s: {}", failing.count(), active.error().message));
        say(o_, "squeue failed (asked again at the next poll): " + active.error().message);
        return;
      }
      squeue_failing_since_.reset();
      auto [tasks, reason] = std::move(*active);
      auto line = fmt::format("slurm array {}: {}{}", array_->id(), describe_tasks(tasks),
                              reason.empty() ? "" : " (" + reason + ")");
      if (line != last_line_) say(o_, line);
      last_line_ = line;
      if (!tasks.empty()) {
        if (watch_.stalled(StallWatch::Clock::now(), counts.running, counts.finished()))
          // The destructor cancels the array; the jobs stay queued for the next sweep.
          throw common::Fatal(fmt::format(
              "no job of Slurm array {} has run for {} s{}; are the partition's nodes up (sinfo -R)? The jobs stay "
              "queued; --stall-timeout sets how long to wait",
              array_->id(), o_.stall.count(), reason.empty() ? "" : " (pending: " + reason + ")"));
        return;
      }
      // Jobs of ours that other workers hold under live leases (another
      // project's sweep shares them, a task of an earlier array still runs):
      // a new array would find nothing to take and leave. Wait for them to
      // finish or their leases to lapse; then one more array is submitted.
      if (counts.running > 0) {
        auto waiting = fmt::format("waiting for {} job(s) other workers hold", counts.running);
        if (waiting != last_waiting_) say(o_, waiting);
        last_waiting_ = waiting;
        waited_on_others_ = true;
        return;
      }
      // Judged on the jobs it was submitted for: bisection's next step waits
      // for new ones, none finished, after an array that did its work and
      // left on idle.
      // Nor after tasks stopped mid-job (preempted, a time limit, scancel)
      // that handed their jobs back: another array takes them (each job's
      // hand-backs are capped, so this ends).
      if (counts.given_back > given_back_at_submit_)
        say(o_, fmt::format("the Slurm workers of array {} were stopped and handed back {} job(s): submitting another",
                            array_->id(), counts.given_back - given_back_at_submit_));
      else if (!waited_on_others_ && ids == ids_at_submit_ && counts.finished() == finished_at_submit_) {
        auto said = last_task_words(spec_.log_dir, array_->id());
        throw common::Fatal(fmt::format(
            "the Slurm workers of array {} ended without finishing a job{}; their output "
            "is in {}",
            array_->id(), said.empty() ? "" : " (a task's last line: " + said + ")", spec_.log_dir.string()));
      }
      if (auto acct = array_->accounting(); !acct.empty())
        for (const auto& l : common::split(acct, '\n')) say(o_, "sacct: " + l);
    }
    array_ = SlurmArray::submit(spec_, o_.dsn).take();
    if (o_.on_slurm_array) o_.on_slurm_array(array_->id());
    waited_on_others_ = false;
    last_waiting_.clear();
    finished_at_submit_ = counts.finished();
    given_back_at_submit_ = counts.given_back;
    ids_at_submit_ = ids;
    watch_.restart(StallWatch::Clock::now());
    say(o_, fmt::format("submitted {} worker(s) as Slurm array {}{} (output in {})", spec_.tasks, array_->id(),
                        spec_.partition.empty() ? "" : " on partition " + spec_.partition, spec_.log_dir.string()));
  }

 private:
  const SweepOptions& o_;
  SlurmSpec spec_;
  std::optional<SlurmArray> array_;
  StallWatch watch_;
  int finished_at_submit_ = -1;
  int given_back_at_submit_ = 0;
  std::vector<db::Id> ids_at_submit_;
  std::string last_line_;
  std::optional<StallWatch::Clock::time_point> squeue_failing_since_;
  bool waited_on_others_ = false;
  std::string last_waiting_;  ///< said apart from last_line_: the two alternate on every poll while it waits  ///< since the last array ended: it may have left for want of jobs, not failed
};

/// Best effort: the error may be the database's own, gone with it; then the
/// next sweep marks this one interrupted.
void record_failed_sweep(db::Database& db, db::Id sweep_id, int planned, const std::string& error) {
  auto line = common::first_line(error);
  try {
    db::finish_sweep(db, sweep_id, "failed", "", planned, line.empty() ? "an error without a message" : line);
  } catch (const std::exception&) {
  }
}

/// What a sweep takes up of earlier sweeps' jobs, for its header: "takes up
/// 2 failed job(s) to retry and 1 job(s) an earlier sweep left queued", ""
/// when none.
std::string taken_up_text(std::size_t retried, std::size_t waiting) {
  std::vector<std::string> parts;
  if (retried > 0) parts.push_back(fmt::format("{} failed job(s) to retry", retried));
  if (waiting > 0) parts.push_back(fmt::format("{} job(s) an earlier sweep left queued", waiting));
  return parts.empty() ? "" : "takes up " + fmt::format("{}", fmt::join(parts, " and "));
}

}  // namespace

SweepReport run_sweep(const SweepOptions& o) {
  auto start = std::chrono::steady_clock::now();
  SweepReport report;
  auto lock_db = db::Database::connect(o.target).take();
  lock_db.require_current_schema();
  // A promoted policy replaces the project file's, and its training check-in becomes the baseline.
  const auto p = with_tracked_policy(lock_db, o.project);
  if (!db::try_lock_project(lock_db, p.name))
    throw SweepBusy("another sweep of project '" + p.name + "' is running (on " + o.target.display + ")");
  db::interrupt_dead_sweeps(lock_db, p.name);  // before "nothing new" too: a quiet night still tells them
  requeue_dead_local_workers(lock_db, p.name, o);

  auto recipe = builder::load_recipe(p.recipe).take();
  // A sweep evaluates what it builds: without a compile line every
  // evaluation would fail its attempts at run time, night after night.
  if (recipe.compile.empty())
    throw common::Fatal("recipe " + p.recipe + " has no [compile] section: a sweep cannot compile the suites' "
                        "modules with it (add e.g. command = \"{compiler} {input} -o {output} -Oz\")");
  auto model = policy::PolicyModel::load(p.policy).take();
  const auto& meta = model.metadata();
  PlanInput in;
  in.recipe = p.recipe;
  in.recipe_hash = recipe.content_hash;
  in.policy = p.policy;
  in.policy_hash = meta.content_hash;
  for (const auto& s : p.suites) {
    auto selected = select_suite(o.data_dir, s);  // a suite not built yet is named here, before any work
    in.suites.push_back({s, selected.manifest_hash});
  }

  std::optional<std::string> after;
  std::optional<db::LastSweep> last;
  // Projects are known by name: a second file of the same name, whose
  // predecessor is still there, would silently share this one's series,
  // alerts and lineage. (One whose last file is gone has moved.) Said under
  // --quiet too.
  // Canonical: a path through a symlink is the same file.
  std::error_code canonical_error;
  const auto project_file = p.path.empty() ? std::string() : fs::weakly_canonical(p.path, canonical_error).string();
  if (auto last_file = db::last_project_file(lock_db, p.name);
      !project_file.empty() && !last_file.empty() && last_file != project_file && fs::exists(last_file) &&
      !fs::equivalent(last_file, project_file, canonical_error))
    fmt::print(stderr,
               "warning: project '{}' was last swept from {}, which is still there; this sweep reads {}: two project "
               "files of one name share one series, its alerts and its policy lineage (give one of them another "
               "[project] name if they are two projects)\n",
               p.name, last_file, project_file);
  auto sampling = sampling_settings(p);
  std::string sampling_note;  // said once the branch resolves: a misspelt one is an error, not a new grid
  if (o.only_new) {
    last = db::last_sweep(lock_db, p.name);
    if (!last) note(o, "no finished sweep of this project yet: --new sweeps the whole range");
    // Edited sampling makes another grid, whose points before the last head
    // were never planned: only a whole-range sweep plans them (what is done
    // is not done again).
    else if (!p.repo.empty() && !last->sampling.empty() && last->sampling != sampling &&
             !only_until_moved_later(last->sampling, p))
      sampling_note =
          "the project's sampling changed since the last sweep (" +
          (last->sampling.starts_with(kToolchainSettings) ? std::string("toolchains only") : last->sampling) + " → " +
          sampling + "): --new sweeps the whole range on the new grid; jobs already done are not run again";
    else
      after = last->head_sha;
  }
  // Where `--new` starts next time: a check-in of the repository, never a
  // toolchain's label, which the history walk would not find.
  std::string git_head;
  std::vector<std::string> grid;  // the whole range's samples, for the build-broken rule
  std::vector<std::string> analysis_grid;  // the project file's samples, on which drift is judged
  std::string tip_note;           // where the tracked branch is, for "nothing new"
  if (p.repo.empty() && p.stale_after_seconds > 0)
    say(o, "warning: sampling.stale_after is not checked: the project has no compiler.repo, only toolchains");
  if (!p.repo.empty()) {
    auto repo = tracker::GitRepo::open(p.repo).take();
    auto tracked = repo.tracked(p.branch).take();
    if (!sampling_note.empty()) say(o, sampling_note);
    // A tag or a commit named as the branch resolves too, but never moves:
    // "update the repository" would not help there.
    bool fixed = !p.branch.empty() && tracked != "HEAD" && !tracked.starts_with("refs/heads/") &&
                 !tracked.starts_with("refs/remotes/");
    auto every = o.every.empty() ? p.every : o.every;
    auto since = o.since.empty() ? p.since : o.since;
    if (auto tip = repo.commit(tracked)) {
      auto branch = p.branch.empty() ? std::string("HEAD") : p.branch;
      // A tip past the last sweep's head: its check-ins wait for their
      // period (or count) of `every` to end, which fetching would not change.
      bool moved = after && tip->sha != *after;
      auto until = until_time(p).take();
      tip_note =
          "; the tip of " + branch + " is " + tip->short_sha() + " from " + tracker::format_date(tip->time) +
          (fixed ? " (branch = \"" + p.branch +
                       "\" names no branch, local or remote-tracking: a tag or a commit, it never moves)"
           : moved && until && tip->time > *until ? " (until = \"" + p.until + "\" ends the project's range before it)"
           : moved ? " (every = \"" + every + "\" samples none of the check-ins after the last sweep yet)"
                   : " (driftwatch never fetches: update the repository first)");
      // Sweeps of a repository nobody updates find "nothing new" night
      // after night and exit 0: with stale_after set, that fails instead.
      auto age = std::int64_t(std::time(nullptr)) - tip->time;
      if (fixed && p.stale_after_seconds > 0)
        say(o, "warning: sampling.stale_after is not checked: branch = \"" + p.branch +
                   "\" names a tag or a commit, which never moves");
      else if (p.stale_after_seconds > 0 && age > p.stale_after_seconds)
        report.stale_tip = "the tip of " + branch + " in " + p.repo + ", " + tip->short_sha() + " from " +
                           tracker::format_date(tip->time) + ", is " + days_or_hours(age) +
                           " old, older than sampling.stale_after (" + days_or_hours(p.stale_after_seconds) +
                           "): driftwatch never fetches; is the repository's `git fetch` still running?";
    }
    in.repo = repo.location().string();
    std::string baseline;
    if (!meta.compiler_commit.empty()) {
      if (auto b = repo.resolve(meta.compiler_commit)) baseline = *b;
      else
        say(o, "warning: the policy's training check-in " + meta.compiler_commit.substr(0, 12) + " is not in " +
                   in.repo + "; drift is measured from the first swept check-in");
    }
    for (const auto& sha : sweep_checkins(p, every, since, after, baseline, o.only_new).take())
      in.checkins.push_back({sha, "", "", 0});
    if (after) grid = sweep_checkins(p, every, since, std::nullopt, baseline).take();
    else
      for (const auto& c : in.checkins) grid.push_back(c.sha);
    // Drift is judged on the project's grid, as `decide` and `bisect` judge
    // it: a one-off --every or --since measures more (or other) check-ins,
    // which the analysis uses as it uses bisection's, but does not change
    // what counts as a sample (a broken-build run, a change spread between
    // samples), or alerts would come and go with how a sweep was started.
    if (!o.every.empty() || !o.since.empty())
      analysis_grid = sweep_checkins(p, p.every, p.since, std::nullopt, baseline).take();
    else
      analysis_grid = grid;
    // Measuring it anyway would bisect and alert on history the project
    // left out; said instead, with how to include it. The project's range,
    // not a one-off --since's (which leaves the project's baseline as it is).
    if (!baseline.empty() && !analysis_grid.empty() &&
        std::find(analysis_grid.begin(), analysis_grid.end(), baseline) == analysis_grid.end())
      say(o, "warning: the policy's training check-in " + baseline.substr(0, 12) +
                 " lies outside the project's range (from, since, until): drift and decide judge from the first "
                 "swept check-in; widen the range to measure from it");
    // A one-off --since before the project's range measures check-ins that
    // drift, alerts, decide and the report leave out: said, or the builds
    // are paid for and "no new alert" read for a period never judged.
    // (`from` bounds every sampling, a one-off's too: only `since` can.)
    // The range begins at the policy's training check-in when that is later
    // (project_range_start): what lies before it is left out as well.
    if (!o.since.empty() && (!p.since.empty() || !baseline.empty()) && !in.checkins.empty())
      if (auto range = repo.first_parent_history(
              tracked, p.from.empty() ? std::nullopt : std::optional(p.from),
              p.since.empty() ? std::nullopt : std::optional(tracker::parse_date(p.since).take()))) {
        auto first = range->begin();
        bool from_training = false;
        if (auto t = std::find_if(range->begin(), range->end(), [&](const auto& c) { return c.sha == baseline; });
            t != range->end() && t != range->begin()) {
          first = t;
          from_training = true;
        }
        std::set<std::string> in_range;
        for (auto c = first; c != range->end(); ++c) in_range.insert(c->sha);
        auto before = std::count_if(in.checkins.begin(), in.checkins.end(),
                                    [&](const auto& c) { return !in_range.count(c.sha); });
        if (before > 0 && from_training)
          say(o, fmt::format("warning: {} of the {} check-in(s) this sweep measures lie before the policy's "
                             "training check-in {}, where the project's drift begins: they are built and measured, "
                             "but drift, alerts, decide and the report leave them out",
                             before, in.checkins.size(), baseline.substr(0, 12)));
        else if (before > 0 && !p.since.empty())
          say(o, fmt::format("warning: {} of the {} check-in(s) this sweep measures lie before the project's range "
                             "({}): they are built and measured, but drift, alerts, decide and the report begin "
                             "where the range does; set {} earlier in the project file to judge them",
                             before, in.checkins.size(), "since = \"" + p.since + "\"", "sampling.since"));
      }
    // A one-off grid leaves where --new starts as it was: a coarser one (a
    // month after weeks without sweeps) would carry it past samples of the
    // project's grid nobody measured; the next --new plans them (what the
    // one-off measured is done and is not built again).
    if (o.every.empty() && o.since.empty() && !in.checkins.empty()) git_head = in.checkins.back().sha;
    // A tag pushed after the nightly sweep passed its check-in: one sweep of
    // the range would measure it, so --new does too, once (after git_head:
    // where the next --new starts does not move back).
    // Late means never built under this recipe: a check-in measured before
    // (on the grid, by bisection, or for a policy promoted since) is not.
    if (after && p.tags) {
      auto tags = repo.tags().take();  // read once: llvm-project has hundreds
      std::vector<PlannedCheckin> late;
      for (const auto& sha : grid) {
        auto tagged = tags.find(sha);
        if (tagged == tags.end()) continue;
        if (std::any_of(in.checkins.begin(), in.checkins.end(), [&](const auto& c) { return c.sha == sha; })) continue;
        PlannedCheckin t{sha, "", "", 0};
        if (db::jobs_finished(lock_db, {build_job_key(in, t)})) continue;
        say(o, "measuring " + sha.substr(0, 12) + " too: tagged " + tagged->second.front() + " since it was swept past");
        late.push_back(t);
      }
      in.checkins.insert(in.checkins.begin(), late.begin(), late.end());
    }
    // Drift is measured from the baseline: a `--new` sweep after a promotion
    // measures the new policy there too, unless that is done already, or it
    // lies off the range's first-parent line (a release branch's check-in:
    // drift analysis could not place it, so building it would be wasted).
    if (after && !baseline.empty() && std::find(grid.begin(), grid.end(), baseline) != grid.end() &&
        std::none_of(in.checkins.begin(), in.checkins.end(), [&](const auto& c) { return c.sha == baseline; })) {
      PlannedCheckin b{baseline, "", "", 0};
      std::vector<std::string> keys;
      for (const auto& s : in.suites) keys.push_back(eval_job_key(in, b, s));
      if (!db::jobs_finished(lock_db, keys)) {
        say(o, "measuring the policy's training check-in " + baseline.substr(0, 12) +
                   " too: drift is measured from it");
        in.checkins.insert(in.checkins.begin(), b);
      }
    }
    // The grid's check-ins swept already, from the baseline on, built under
    // this recipe but never evaluated with this policy or suite (a policy
    // promoted or rolled back, a suite added since): measured too, or the
    // series would end at an older head while the range's head has a
    // result of another policy only. Those nobody built under this recipe
    // (a recipe edited, a checkout moved) are left to a sweep of the range.
    // Looked for only when the last head has no evaluation of this policy
    // and suite (the night after such a change): a nightly's own --new reads
    // one job, not the whole grid's. On the project's grid, as drift judges
    // it, not a one-off --every or --since.
    if (after && !evaluated_here(lock_db, in, *after)) {
      auto unmeasured = unmeasured_on_grid(lock_db, in, analysis_grid, baseline);
      if (!unmeasured.empty()) {
        say(o, fmt::format("measuring {} check-in(s) swept before too: this policy or suite has no result there yet "
                           "(a policy promoted or rolled back, a suite added)",
                           unmeasured.size()));
        // After the baseline, which drift is measured from.
        auto at = in.checkins.begin();
        if (at != in.checkins.end() && at->sha == baseline) ++at;
        in.checkins.insert(at, unmeasured.begin(), unmeasured.end());
      }
    }
    if (in.checkins.empty() && !after && p.toolchains.empty())
      throw common::Fatal("the sampling of project '" + p.name + "' selects no check-in of " + p.repo + " (every = \"" +
                          every + "\", since = \"" + since + "\", until = \"" + p.until + "\", tags = " +
                          (p.tags ? "true" : "false") + "); a sweep over nothing is a mistake");
  }
  // Toolchains have no history to start --new from: it takes those an
  // earlier sweep has not measured (a nightly's new [[toolchains]] entry).
  for (auto& t : toolchain_checkins(p)) {
    if (o.only_new && after) {
      std::vector<std::string> keys{build_job_key(in, t)};
      for (const auto& s : in.suites) keys.push_back(eval_job_key(in, t, s));
      if (db::jobs_finished(lock_db, keys)) continue;
    }
    in.checkins.push_back(std::move(t));
  }

  db::RequeueFilter today{in.recipe_hash, in.policy_hash, in.repo, {}, std::vector<std::string>{}};
  for (const auto& s : in.suites) today.suite_hashes.push_back(s.manifest_hash);
  for (const auto& t : p.toolchains) today.toolchains->push_back(t.dir.string());
  // Jobs an interrupted sweep left queued: nothing else runs them (a
  // nightly --new found "nothing new" while the report said they waited).
  auto waiting = db::waiting_jobs(lock_db, p.name, today);
  auto retried = db::requeue_failed_jobs(lock_db, p.name, today);
  // A sweep stopped before its analysis (killed, failed) left what it
  // measured unanalysed, and the report says so: tonight analyses it, new
  // check-ins or not.
  auto newest = db::newest_sweep(lock_db, p.name);
  bool stopped = newest && newest->state != "done";
  // A toolchain re-dated, relabelled or taken off the list moves where a
  // change lies (and what alerts name) with nothing new to measure: a
  // nightly --new that said "nothing new" left its alerts as they were.
  // (Sweeps before this was recorded wrote "no repository": not an edit.)
  bool toolchains_edited = p.repo.empty() && last && last->sampling.starts_with(kToolchainSettings) &&
                           last->sampling != toolchain_settings(p);
  bool unanalysed = stopped || toolchains_edited;
  bool nothing_to_run = in.checkins.empty() && retried.empty() && waiting.empty();
  if (nothing_to_run && stopped)
    say(o, fmt::format("nothing new to measure, but sweep #{} stopped before it analysed what it measured: "
                       "analysing it now",
                       newest->id));
  else if (nothing_to_run && toolchains_edited)
    say(o,
        "nothing new to measure, but the project's toolchains were edited since the last sweep (re-dated, "
        "relabelled or taken off the list): analysing them again");
  if (nothing_to_run && !unanalysed) {
    report.nothing_new = true;
    // A toolchains-only project's head is its newest toolchain.
    const auto labels = toolchain_labels(p);
    auto label = labels.find(after.value_or(""));
    say(o, "nothing new since the last sweep (" +
               checkin_name(after.value_or(""), label == labels.end() ? "" : label->second) + ")" + tip_note);
    report.drift.notifications = deliver_pending_alerts(p, lock_db);  // what failed to go out last time
    return report;
  }
  report.checkins = static_cast<int>(in.checkins.size());
  if (!p.repo.empty()) report.head = !git_head.empty() ? git_head : after.value_or("");
  else report.head = in.checkins.empty() ? after.value_or("") : in.checkins.back().sha;
  report.sweep_id = db::begin_sweep(lock_db, p.name, project_file);
  // From here an error leaves the sweep 'failed' with its reason, for the
  // report and the next sweep to say, not 'running' until someone looks.
  try {
    auto ids = db::enqueue_jobs(lock_db, p.name, report.sweep_id, plan_jobs(in));
    db::adopt_jobs(lock_db, report.sweep_id, retried);
    waiting = db::waiting_jobs(lock_db, p.name, today, report.sweep_id);  // as they are now
    ids.insert(ids.end(), retried.begin(), retried.end());
    ids.insert(ids.end(), waiting.begin(), waiting.end());
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    auto counts = db::count_jobs(lock_db, ids);
    // The sweep's id is the database's (`jobs --sweep N`), not a count of this project's sweeps.
    // Said under -q too when it takes up jobs an earlier sweep left: the summary does not say that.
    const auto earlier = taken_up_text(retried.size(), waiting.size());
    // Nothing new planned: "0 check-in(s) × 1 suite(s)" beside jobs read as a contradiction.
    (retried.empty() && waiting.empty() ? note : say)(
        o, report.checkins > 0
               ? fmt::format("sweep #{}, project {}: {} check-in(s) × {} suite(s): {} jobs, {} already done{}",
                             report.sweep_id, p.name, report.checkins, in.suites.size(), ids.size(),
                             counts.done + counts.skipped, earlier.empty() ? "" : ", " + earlier)
           : earlier.empty()
               ? fmt::format("sweep #{}, project {}: no new check-in to measure", report.sweep_id, p.name)
               : fmt::format("sweep #{}, project {}: no new check-in; {}", report.sweep_id, p.name, earlier));

    if (o.progress) o.progress->start(counts.total() - counts.finished());
    int workers = std::max(1, o.workers);
    std::set<db::Id> reported;  // failed jobs whose reason a local worker gave already
    LocalWorkers local{o.target,         p.name,    o.data_dir,   1, workers, o.progress,
                       &report.failures, &reported, &report.time, {}};
    local.jobs = o.jobs > 0 ? o.jobs : p.jobs > 0 ? p.jobs : std::max(1, jobs_or_cores(0) / workers);
    // Unless -j or the project says, a build takes every core: the workers'
    // builds of one compiler run one at a time (its work tree's lock).
    if (o.jobs <= 0 && p.jobs <= 0) local.build_jobs = jobs_or_cores(0);
    local.retry_backoff = p.retry_backoff;
    std::optional<SlurmFollower> slurm;
    if (o.engine != Engine::Local) {
      local.workers = 0;
      local.jobs = o.jobs > 0 ? o.jobs : p.jobs > 0 ? p.jobs : 1;
      if (o.engine == Engine::Slurm) {
        slurm.emplace(o, local.jobs);
        local.remote = [&slurm](const db::JobCounts& c, const std::vector<db::Id>& ids) { (*slurm)(c, ids); };
      } else {
        local.remote = [&o, watch = StallWatch(o.stall)](const db::JobCounts& c, const std::vector<db::Id>&) mutable {
          if (watch.stalled(StallWatch::Clock::now(), c.running, c.finished()))
            throw common::Fatal(fmt::format(
                "no worker has run a job of this sweep for {} s; start workers on the job table (driftwatch worker, "
                "docs/farm.md). The jobs stay queued; --stall-timeout sets how long to wait",
                o.stall.count()));
        };
      }
    }
    run_until_finished(local, lock_db, ids);
    if (p.repo.empty())
      note(o, "analysing drift along the toolchains' dates (nothing lies between two of them to bisect)");
    else
      note(o, "analysing drift" + std::string(p.alerts.bisect ? " and bisecting changes" : ""));
    report.drift = analyse_drift({p, local, p.alerts.bisect, analysis_grid, report.sweep_id}, lock_db);
    // Bisection's builds and evaluations are this sweep's work too: their
    // failures count in its exit status.
    ids.insert(ids.end(), report.drift.job_ids.begin(), report.drift.job_ids.end());
    report.jobs = db::count_jobs(lock_db, ids);
    // The reasons of failures no local worker saw are read back: jobs run on
    // remote workers, given up when claimed (workers that kept dying), or
    // cancelled by a person. Each failed job is named, whatever the engine.
    for (auto& f : failures_not_seen_here(lock_db, p.name, ids, reported)) report.failures.push_back(std::move(f));
    report.did_not_build = builds_without_compiler(lock_db, p.name, report.sweep_id);
    // A job bisection queued again and that failed again is said once.
    std::set<std::string> said;
    report.failures.erase(std::remove_if(report.failures.begin(), report.failures.end(),
                                         [&](const std::string& f) { return !said.insert(f).second; }),
                          report.failures.end());
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // The grid's settings go with the head they lead to: the project's own when
    // this sweep planned its grid, else (a one-off --every/--since, which
    // leaves the head as it was) the last sweep's.
    // Without a repository, a value all the same: a project given one later
    // re-plans its range rather than look for a toolchain's label in it.
    std::string recorded_sampling = p.repo.empty()      ? toolchain_settings(p)
                                    : !git_head.empty() ? sampling
                                    : last              ? last->sampling
                                                        : "";
    db::finish_sweep(
        lock_db, report.sweep_id, "done", report.head, report.checkins,
        fmt::format("{} done, {} skipped, {} failed", report.jobs.done, report.jobs.skipped, report.jobs.failed),
        recorded_sampling);
    return report;
  } catch (const db::ConnectionLost&) {
    throw;  // nothing to write it with: the next sweep marks it interrupted
  } catch (const std::exception& e) {
    record_failed_sweep(lock_db, report.sweep_id, report.checkins, e.what());
    throw;
  }
}

}  // namespace sweep
