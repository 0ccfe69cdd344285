#include "sweep/worker.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/json_text.h"
#include "common/process.h"
#include "common/text.h"
#include "db/jobs.h"
#include "policy/model.h"
#include "sweep/evaluation_run.h"
#include "sweep/plan.h"
#include "sweep/progress.h"
#include "sweep/project_file.h"
#include "sweep/recording.h"
#include "tracker/sampling.h"

namespace sweep {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

/// The machines a job failed on, this last attempt's included: one name says
/// the machine may be at fault, several that the job is.
std::string hosts_failed(const db::Job& job, const std::string& owner) {
  auto hosts = job.failed_hosts;
  auto here = owner_host(owner);
  if (std::find(hosts.begin(), hosts.end(), here) == hosts.end()) hosts.push_back(here);
  return fmt::format("{}", fmt::join(hosts, ", "));
}

/// Renews a job's lease from its own connection while the job runs, so a
/// long build is not taken for a dead worker's. Once the job is no longer
/// this worker's (people cancelled it, or it expired and another worker
/// took it), lost() is set: the job's build or compiles are stopped
/// (common::StopScope) rather than run on for nothing.
class LeaseKeeper {
 public:
  LeaseKeeper(const db::Target& target, db::Id job, std::string owner, int lease_seconds,
              std::function<void(const std::string&)> log)
      : log_(std::move(log)), thread_([=, this] { run(target, job, owner, lease_seconds); }) {}
  ~LeaseKeeper() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  const std::atomic<bool>* lost() const { return &lost_; }

 private:
  void run(const db::Target& target, db::Id job, const std::string& owner, int lease_seconds) {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::seconds(std::max(1, lease_seconds / 3)), [this] { return done_; })) {
      try {  // a database away for a moment is the main loop's to handle
        auto db = db::Database::connect(target);
        if (db && !lost_ && !db::renew_lease(*db, job, owner, lease_seconds)) {
          lost_ = true;  // said once: the job's children are stopped, and its result is refused
          if (log_)
            log_("job " + std::to_string(job) + ": its lease was taken (it expired and another worker claimed the " +
                 "job, or it was cancelled): its build or compiles are stopped, and nothing of it is stored");
        }
      } catch (const std::exception&) {
      }
    }
  }
  std::function<void(const std::string&)> log_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::atomic<bool> lost_ = false;
  std::thread thread_;
};

/// What a worker keeps between jobs: loaded policies, suites, recipes.
class Executor {
 public:
  explicit Executor(const WorkerOptions& o) : o_(o) {}

  /// Runs one claimed job and finishes it in the database.
  JobEvent run(db::Database& db, const db::Job& job) {
    auto start = std::chrono::steady_clock::now();
    db::JobFinish finish{job.id, o_.owner, "{}"};
    JobEvent ev{job.kind, db::kJobDone, "", 0};
    ev.job_id = job.id;
    try {
      try {
        auto p = json::parse(job.payload_json);
        // A toolchain by its label, as people named it; a check-in by its sha.
        ev.what =
            p.contains("toolchain") ? p.value("label", p.value("toolchain", "")) : p.value("sha", "").substr(0, 12);
        if (job.kind == kBuildJob) run_build(db, job, p, finish, ev);
        else if (job.kind == kEvalJob) run_eval(db, job, p, finish, ev);
        else throw common::Fatal("unknown job kind '" + job.kind + "'");
      } catch (const db::ConnectionLost&) {
        throw;
      } catch (const db::LeaseLost&) {
        throw;
      } catch (const AttemptFailed& e) {
        std::string why = common::trim(e.what());
        if (job.attempts >= job.max_attempts)
          why += e.ambiguous                               ? " (an earlier attempt failed by the machine alone: nothing is stored)"
                 : job.machine_failures == job.attempts - 1 ? " (the machine's failure on every attempt: nothing is stored)"
                                                            : " (the machine's failure on the last attempt: nothing is stored)";
        fail_or_retry(db, job, why, ev, !e.ambiguous);
      } catch (const std::exception& e) {
        // A failure of this attempt, not of the worker: tried again later, or failed for good.
        fail_or_retry(db, job, common::trim(e.what()), ev);
      }
    } catch (const db::LeaseLost& e) {
      ev.state = kJobLost;
      ev.what += std::string(": ") + e.what();
      if (o_.log) o_.log(ev.kind + " " + ev.what);
    }
    ev.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return ev;
  }

 private:
  /// An attempt that failed: back to the queue after a backoff that doubles
  /// with each attempt, or failed with its reason after the last one.
  /// `machine_only`: nothing but the machine (or the set-up: a missing
  /// policy file, a suite rebuilt) can have caused it, so that a timeout on
  /// a later attempt is not the input's result (db::Job::final_attempt).
  void fail_or_retry(db::Database& db, const db::Job& job, const std::string& why, JobEvent& ev,
                     bool machine_only = true, bool timed_out = false) {
    if (job.attempts < job.max_attempts) {
      double backoff = std::min(o_.retry_backoff * (1 << std::min(job.attempts - 1, 10)), kMaxRetryBackoffSeconds);
      db::retry_job_later(
          db, job.id, o_.owner,
          fmt::format("attempt {} of {} on {}: {}", job.attempts, job.max_attempts, owner_host(o_.owner), why), backoff,
          machine_only, timed_out);
      ev.state = db::kJobQueued;
      ev.what += fmt::format(": attempt {} of {} failed, retried in {}: {}", job.attempts, job.max_attempts,
                             common::format_seconds(backoff), why);
      return;
    }
    ev.state = db::kJobFailed;
    ev.what += ": " + why;
    db::JobFinish finish{job.id, o_.owner, "{}"};
    db::finish_job(db, finish, db::kJobFailed,
                   fmt::format("failed {} of {} attempts on {}; last: {}", job.attempts, job.max_attempts,
                               hosts_failed(job, o_.owner), why));
  }

  /// The job's recipe, as the sweep planned it: a long-lived worker reloads
  /// one that changed on disk, and refuses to build under another recipe
  /// than the job's key names (its results would land in no series).
  const builder::Recipe& recipe(const json& payload) {
    auto name = payload.at("recipe").get<std::string>();
    auto planned = payload.value("recipe_hash", "");
    auto it = recipes_.find(name);
    if (it != recipes_.end() && !planned.empty() && it->second.content_hash != planned) recipes_.erase(it), it = recipes_.end();
    if (it == recipes_.end()) it = recipes_.emplace(name, builder::load_recipe(name).take()).first;
    if (!planned.empty() && it->second.content_hash != planned)
      throw common::Fatal("recipe " + name + " changed since the sweep was planned (content hash " +
                          it->second.content_hash.substr(0, 12) + ", planned " + planned.substr(0, 12) + ")");
    return it->second;
  }
  const tracker::GitRepo& repo(const std::string& path) {
    auto it = repos_.find(path);
    if (it == repos_.end()) it = repos_.emplace(path, tracker::GitRepo::open(path).take()).first;
    return it->second;
  }
  const policy::PolicyModel& model(const std::string& path, const std::string& hash) {
    auto it = models_.find(path);
    if (it != models_.end() && it->second.metadata().content_hash != hash) models_.erase(it), it = models_.end();
    if (it == models_.end()) it = models_.emplace(path, policy::PolicyModel::load(path).take()).first;
    if (it->second.metadata().content_hash != hash)
      throw common::Fatal("policy file " + path + " changed since the sweep was planned (content hash " +
                          it->second.metadata().content_hash.substr(0, 12) + ", planned " + hash.substr(0, 12) + ")");
    return it->second;
  }

  /// Builds the check-in (or serves it from the cache) and records it.
  /// `last_attempt`: a timeout or a failure without a word (transient every
  /// time before) is recorded as the check-in's own result, not cached.
  /// `timed_out_before`: the failed attempt before this one timed out, so a
  /// timeout now is the check-in's result too.
  tracker::CheckinBuild build_checkin(db::Database& db, const json& p, db::Id* build_id, bool last_attempt = false,
                                      bool failed_here_before = false, bool timed_out_before = false) {
    const auto& r = recipe(p);
    const auto& g = repo(p.at("repo").get<std::string>());
    auto sha = p.at("sha").get<std::string>();
    auto commit = g.commit(sha);
    if (!commit)
      throw common::Fatal("check-in " + sha.substr(0, 12) + " is no longer in " + g.location().string() +
                          " (history rewritten?)");
    // A retry on a machine where the build failed before runs half as many
    // jobs: a link the OOM killer took at -j N may fit at N/2, where the
    // same -j would fail the same way on every attempt. Not after a timeout:
    // at half the -j the retry would only be likelier to time out.
    int jobs = builder::capped_jobs(r, o_.build_jobs > 0 ? o_.build_jobs : o_.jobs);
    if (failed_here_before && !timed_out_before && jobs > 1) {
      jobs /= 2;
      if (o_.log) o_.log("build " + sha.substr(0, 12) + ": failed on this machine before, built again at -j " +
                         std::to_string(jobs));
    }
    auto b = tracker::build_checkin(g, r, *commit, {o_.data_dir, jobs, false, o_.log}).take();
    // Retried by a person (`jobs retry`) after it was recorded as failing:
    // the cached failure is what they doubt, so it is built again; a
    // compiler cached since (`driftwatch build --rebuild`) is taken as it is.
    if (p.value("rebuild", false) && b.result.from_cache && b.result.outcome != builder::Outcome::Ok) {
      if (o_.log)
        o_.log("build " + sha.substr(0, 12) + ": retried by hand, built again rather than taken from the cache");
      b = tracker::build_checkin(g, r, *commit, {o_.data_dir, jobs, true, o_.log}).take();
    }
    bool timeout = b.result.outcome == builder::Outcome::Timeout;
    // Two timeouts in a row are the check-in's: a build that hangs (a
    // generator step that never ends) would spend a third on every sweep.
    bool second_timeout = timeout && timed_out_before;
    // Not for a job called off: what a stopped build did is nobody's result.
    if (((last_attempt && (timeout || b.result.unexplained)) || second_timeout) && !common::StopScope::stopped()) {
      b.result.transient = false;  // the check-in's result now, recorded as such (not cached)
      b.result.message += second_timeout ? std::string("; the build job's attempt before timed out too")
                                         : std::string("; the build job's last attempt ") +
                                               (timeout ? "timed out" : "failed so") + " too";
      b.result.message += ": recorded as the check-in's (`driftwatch jobs retry` on its build job tries again)";
      b.result.log_tail += "\n# driftwatch: " + b.result.message + "\n";
    }
    *build_id = record_build(db, g, r, b);
    return b;
  }

  void run_build(db::Database& db, const db::Job& job, const json& p, db::JobFinish& finish, JobEvent& ev) {
    if (p.contains("toolchain")) {
      const auto& r = recipe(p);
      fs::path dir = p.at("toolchain").get<std::string>();
      auto tc = select_toolchain(dir, r);
      ev.what = p.value("label", dir.string());
      // No directory at all: a mount away for the night, a nightly not yet
      // published. Tried again (and by the next sweep), never recorded as
      // the toolchain's result; a directory without the artifacts is one.
      std::error_code ec;
      if (!tc && !fs::exists(dir, ec)) return fail_or_retry(db, job, tc.error().message, ev);
      auto outcome = tc ? "ok" : std::string(builder::outcome_name(builder::Outcome::MissingArtifact));
      auto id = record_toolchain(db, r, dir, p.value("label", ""), p.value("time", std::int64_t{0}), outcome,
                                 tc ? "" : tc.error().message);
      // A nightly published in stages, or repaired in place, may hold them
      // later: `jobs retry` on this job measures it then.
      finish.result_json = json{{"build_id", id},
                                {"outcome", outcome},
                                {"message", tc ? std::string() : tc.error().message},
                                {"retryable", !static_cast<bool>(tc)}}
                               .dump();
      ev.what += ": " + outcome + (tc ? "" : ": " + tc.error().message);
      db::finish_job(db, finish, db::kJobDone);
      return;
    }
    db::Id build_id = 0;
    auto t0 = std::chrono::steady_clock::now();
    // A check-in whose build hangs (a generator step that never ends) is a
    // result once every attempt timed out: otherwise each night's sweep put
    // it back and spent three timeouts on it, and bisection never skipped it.
    bool last_attempt = job.final_attempt();
    auto here = owner_host(o_.owner);
    bool failed_here_before =
        std::find(job.failed_hosts.begin(), job.failed_hosts.end(), here) != job.failed_hosts.end();
    // The attempt before timed out (a silent kill since, the OOM killer's,
    // set the count back: that retry halves -j again). Only when no attempt
    // failed by the machine alone: a timeout then may be its load.
    bool timed_out_before = job.timeouts > 0 && job.machine_failures == 0;
    auto b = build_checkin(db, p, &build_id, last_attempt, failed_here_before, timed_out_before);
    double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ev.build = b.result.from_cache ? 0 : b.result.seconds;
    ev.checkout = b.result.from_cache ? 0 : std::max(0.0, total - b.result.seconds);
    auto outcome = std::string(builder::outcome_name(b.result.outcome));
    json result{{"build_id", build_id}, {"outcome", outcome}, {"message", b.result.message}};
    // Recorded only because every attempt failed so: people may try it again.
    if (last_attempt && b.result.unexplained) result["retryable"] = true;
    finish.result_json = common::json_text(result);
    ev.what = b.commit.short_sha() + " " + tracker::format_date(b.commit.time);
    // A timeout or a failure without a word may pass on another try (on the
    // last, build_checkin made it final); a build that fails is a result.
    if (b.result.transient) {  // says it once
      bool maybe_own = b.result.outcome == builder::Outcome::Timeout || b.result.unexplained;
      return fail_or_retry(
          db, job,
          "build " + outcome + ": " + b.result.message +
              (maybe_own && job.attempts >= job.max_attempts
                   ? " (an earlier attempt failed by the machine alone: not recorded as the check-in's)"
                   : ""),
          ev, !maybe_own, b.result.outcome == builder::Outcome::Timeout);
    }
    ev.what += ": build " + outcome + (b.result.from_cache ? " (cached)" : "") +
               (b.result.rebuilt_because.empty() ? "" : " (built again: " + b.result.rebuilt_because + ")") +
               (b.result.outcome == builder::Outcome::Ok ? "" : ": " + b.result.message);
    db::finish_job(db, finish, db::kJobDone);
  }

  void run_eval(db::Database& db, const db::Job& job, const json& p, db::JobFinish& finish, JobEvent& ev) {
    auto suite_name = p.at("suite").get<std::string>();
    ev.what += " " + suite_name;
    auto dep = job.depends_on ? db::job_state(db, *job.depends_on) : std::nullopt;
    auto dep_result = dep ? json::parse(dep->result_json) : json::object();
    if (!dep || dep->state != db::kJobDone || dep_result.value("outcome", "") != "ok") {
      std::string why = !dep                          ? "its build job is gone"
                        : dep->state != db::kJobDone ? "its build job " + dep->state + ": " + dep->error
                                                      : "the check-in did not build (" + dep_result.value("outcome", "") + ")";
      ev.state = db::kJobSkipped;
      ev.what += ": skipped, " + why;
      finish.result_json = common::json_text(json{{"skipped", why}});
      db::finish_job(db, finish, db::kJobSkipped);
      return;
    }
    // The suite and the policy first: checked in milliseconds, where the
    // compiler may have to be built again here (an hour for LLVM).
    auto s = select_suite(o_.data_dir, suite_name);
    // A suite built apart on each machine (or rebuilt since the sweep was
    // planned) can differ: its results would land in another series than the
    // one the sweep reads, and the planned point would be missing for good.
    if (auto planned = p.value("suite_hash", ""); !planned.empty() && s.manifest_hash != planned)
      throw common::Fatal("suite " + suite_name + " here (" + s.dir.string() + ", manifest " +
                          s.manifest_hash.substr(0, 12) + ") is not the one the sweep planned (" +
                          planned.substr(0, 12) +
                          "): build the same suite on every machine, or share the data directory");
    const auto& m = model(p.at("policy").get<std::string>(), p.at("policy_hash").get<std::string>());
    SelectedBuild build;
    if (p.contains("toolchain")) {
      build = select_toolchain(p.at("toolchain").get<std::string>(), recipe(p)).take();
      build.build_id = dep_result.at("build_id").get<db::Id>();
      build.label = p.value("label", build.label);
    } else {
      db::Id build_id = 0;
      // A cache hit where the build job's machine shares this data
      // directory; built again here when it does not (said, and timed).
      auto b = build_checkin(db, p, &build_id);
      // Its build job succeeded (on another machine, or before a cache prune):
      // this machine cannot build it, which is no fault of the check-in's.
      if (b.result.outcome != builder::Outcome::Ok)
        throw common::Fatal(
            "the build of " + b.commit.short_sha() + " succeeded on its build job's machine but " +
            (b.result.from_cache ? "this machine's cache holds a failed one" : "failed when built again here") +
            " (" + std::string(builder::outcome_name(b.result.outcome)) + ": " + b.result.message +
            "): share the data directory, or give this machine what the build needs");
      if (!b.result.from_cache) {
        ev.build = b.result.seconds;
        ev.what += b.result.rebuilt_because.empty()
                       ? " (built again here: this data directory's cache did not have it)"
                       : " (built again here: " + b.result.rebuilt_because + ")";
      }
      build = selected_from(repo(p.at("repo").get<std::string>()), recipe(p), b,
                            build_id);
    }
    EvaluationRunOptions ro;
    ro.data_dir = o_.data_dir;
    ro.jobs = o_.jobs;
    ro.finish = &finish;
    ro.last_attempt = job.final_attempt();
    if (o_.on_module) {
      auto what = ev.what;
      ro.progress = [this, what](int done, int total, const evaluator::ModuleResult&) { o_.on_module(what, done, total); };
    }
    try {
      auto t0 = std::chrono::steady_clock::now();
      auto stored = evaluate_and_store(db, build, s, m, ro);
      double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      ev.evaluate = stored.result.seconds;
      ev.store = std::max(0.0, total - stored.result.seconds);
      const auto& u = stored.result.summary;
      ev.what += fmt::format(": uplift {}, total {}, {}/{}/{}", common::signed_percent(u.uplift),
                             common::signed_percent(u.total_uplift), u.wins, u.ties, u.losses);
      // The figures leave such modules out: said here, or a compiler that
      // crashes on some of the suite reads as a quiet night.
      const auto& r = stored.result;
      if (r.failed > 0) {
        std::string first;
        for (const auto& m : r.modules)
          for (const auto* h : {&m.by_default, &m.learned})
            if (first.empty() && !h->ok() && !h->not_consulted())
              first = m.name + " (" + (h == &m.by_default ? "default" : "learned") + "): " + h->outcome;
        ev.what += fmt::format(", {} module(s) failed to compile (first: {})", r.failed, first);
      }
      if (r.not_consulted > 0) ev.what += fmt::format(", {} module(s) never asked the policy", r.not_consulted);
      if (!stored.reused_from.empty()) ev.what += " (" + stored.reused_from + ")";
    } catch (const EvaluationFailed& e) {
      // The policy cannot run on this build at all (its features are gone):
      // a result of this check-in, stored with the evaluation; not retried.
      // Anything else (a database or disk error) fails this attempt only.
      finish.result_json = common::json_text(json{{"error", e.what()}});
      ev.what += std::string(": evaluation failed: ") + e.what();
      db::finish_job(db, finish, db::kJobDone);
    }
  }

  const WorkerOptions& o_;
  std::map<std::string, builder::Recipe> recipes_;
  std::map<std::string, tracker::GitRepo> repos_;
  std::map<std::string, policy::PolicyModel> models_;
};

db::Database reconnect(const WorkerOptions& o, const std::string& why) {
  if (o.log) o.log(why + "; reconnecting");
  return db::Database::connect_within(o.target, o.reconnect_seconds).take();
}

}  // namespace

WorkerReport run_worker(const WorkerOptions& o) {
  WorkerReport report;
  Executor executor(o);
  auto db = db::Database::connect(o.target).take();
  auto idle_since = std::chrono::steady_clock::now();
  int ran = 0;
  while (o.max_jobs == 0 || ran < o.max_jobs) {
    try {
      // A newer driftwatch may have migrated the database since this worker
      // started (or reconnected): stop rather than write rows it does not know.
      db.require_current_schema();
      auto job = db::claim_job(db, o.project, o.owner, o.kinds, o.lease_seconds);
      if (!job) {
        double idle = std::chrono::duration<double>(std::chrono::steady_clock::now() - idle_since).count();
        if (idle >= o.idle_exit) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        continue;
      }
      JobEvent ev;
      {
        LeaseKeeper lease(o.target, job->id, o.owner, o.lease_seconds, o.log);
        common::StopScope stop(lease.lost());
        ev = executor.run(db, *job);
      }
      ++ran;
      idle_since = std::chrono::steady_clock::now();
      if (ev.state == db::kJobDone) ++report.done;
      else if (ev.state == db::kJobFailed) ++report.failed;
      else if (ev.state == db::kJobSkipped) ++report.skipped;
      else if (ev.state == db::kJobQueued) ++report.retried;
      else ++report.lost;
      if (o.on_job) o.on_job(ev);
    } catch (const db::ConnectionLost& e) {
      db = reconnect(o, e.what());
      // What this worker held is handed back: its results, if any, were not committed.
      db::requeue_jobs_of(db, o.owner, true);
    }
  }
  return report;
}

std::vector<std::string> failures_not_seen_here(db::Database& db, const std::string& project,
                                                const std::vector<db::Id>& ids, const std::set<db::Id>& reported) {
  std::vector<std::string> out;
  std::set<db::Id> mine(ids.begin(), ids.end());
  for (const auto& j : db::list_jobs(db, {project, {db::kJobFailed}, std::nullopt, 0}))
    if (mine.count(j.id) && !reported.count(j.id)) out.push_back(fmt::format("{} job {}: {}", j.kind, j.id, j.error));
  return out;
}

std::vector<std::string> builds_without_compiler(db::Database& db, const std::string& project, db::Id sweep_id) {
  std::vector<std::string> out;
  // Newest first as listed; said oldest first. A job this sweep ran (again)
  // is its own: planned, retried (db::adopt_jobs) or queued by its bisection.
  auto rows = db::list_jobs(db, {project, {db::kJobDone}, sweep_id, 0});
  for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
    const auto& j = *it;
    if (j.kind != kBuildJob) continue;
    auto result = json::parse(j.result_json.empty() ? "{}" : j.result_json, nullptr, false);
    auto payload = json::parse(j.payload_json, nullptr, false);
    if (result.is_discarded() || payload.is_discarded()) continue;
    auto outcome = result.value("outcome", std::string());
    if (outcome.empty() || outcome == "ok") continue;
    auto label = payload.value("label", std::string());
    auto where = label.empty() ? payload.value("sha", std::string()).substr(0, 12) : "toolchain " + label;
    auto message = common::printable(common::last_line(result.value("message", std::string())));
    if (message.size() > 160) message = common::valid_utf8(message.substr(0, 157)) + "...";
    out.push_back(where + " (build job " + std::to_string(j.id) + "): " + outcome +
                  (message.empty() ? "" : " (" + message + ")"));
  }
  return out;
}

void run_until_finished(const LocalWorkers& l, db::Database& db, const std::vector<db::Id>& ids) {
  std::string last_wait;
  for (;;) {
    std::vector<std::thread> threads;
    std::vector<std::exception_ptr> errors(l.workers);
    std::mutex failures_mutex;
    for (int w = 0; w < l.workers; ++w)
      threads.emplace_back([&, w] {
        try {
          WorkerOptions wo;
          wo.target = l.target;
          wo.project = l.project;
          wo.owner = worker_owner_name(w);
          wo.data_dir = l.data_dir;
          wo.jobs = l.jobs;
          wo.build_jobs = l.build_jobs;
          wo.retry_backoff = l.retry_backoff;
          wo.log = [&l](const std::string& line) {
            if (l.progress) l.progress->line(line);
          };
          wo.on_job = [&](const JobEvent& ev) {
            // A failed attempt put back in the queue is said, but the job is not done yet.
            if (l.progress && ev.state == db::kJobQueued) l.progress->line(ev.kind + " " + ev.what);
            else if (l.progress) l.progress->step(ev.kind + " " + ev.what);
            std::lock_guard<std::mutex> lock(failures_mutex);
            if (l.time) {
              l.time->jobs += ev.seconds;
              l.time->checkout += ev.checkout;
              l.time->build += ev.build;
              l.time->evaluate += ev.evaluate;
              l.time->store += ev.store;
            }
            if (ev.state == db::kJobFailed && l.failures) l.failures->push_back(ev.kind + " " + ev.what);
            if (ev.state == db::kJobFailed && l.failed_ids) l.failed_ids->insert(ev.job_id);
          };
          wo.on_module = [&l](const std::string& what, int done, int total) {
            if (l.progress) l.progress->detail(what, done, total);
          };
          run_worker(wo);
        } catch (...) {
          errors[w] = std::current_exception();
        }
      });
    for (auto& t : threads) t.join();
    for (auto& e : errors)
      if (e) std::rethrow_exception(e);
    db::JobCounts counts;
    try {
      counts = db::count_jobs(db, ids);
    } catch (const db::ConnectionLost& e) {
      // The workers reconnected on their own; the coordinator does the same
      // and takes the project's lock again (it went with the old session).
      WorkerOptions wo;
      wo.target = l.target;
      wo.log = [&l](const std::string& line) {
        if (l.progress) l.progress->line(line);
      };
      int lost_pid = db::session_pid(db);
      db = reconnect(wo, e.what());
      if (!db::retake_project_lock(db, l.project, lost_pid))
        throw common::Fatal("another sweep of project '" + l.project +
                            "' took its lock while the connection to PostgreSQL was lost");
      continue;
    }
    if (counts.finished() == counts.total()) return;
    // The rest runs on remote workers, or waits for jobs that do (or for a retry's backoff).
    if (l.remote) l.remote(counts, ids);
    if (l.workers == 0) {
      auto wait = fmt::format("waiting for workers: {} queued, {} running, {} of {} finished", counts.queued,
                              counts.running, counts.finished(), counts.total());
      if (wait != last_wait && l.progress) l.progress->line(wait);
      last_wait = wait;
    }
    std::this_thread::sleep_for(std::chrono::seconds(2));
  }
}

}  // namespace sweep
