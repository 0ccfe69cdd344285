#include "sweep/evaluation_run.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <exception>
#include <optional>

#include "common/hash.h"
#include "common/json_text.h"
#include "common/process.h"
#include "common/text.h"
#include "db/jobs.h"
#include "db/store.h"
#include "evaluator/metrics.h"
#include "evaluator/suite_builder.h"
#include "policy/compiler.h"
#include "policy/policy_runner.h"
#include "sweep/evaluation_reuse.h"
#include "sweep/timeline.h"

namespace sweep {
namespace fs = std::filesystem;

namespace {

/// How long a standalone evaluation waits for a restarted database, as workers do.
constexpr double kReconnectSeconds = 60;

/// Stores the evaluation; with options.reconnect, a database lost meanwhile is
/// reconnected to and the record stored there: what was measured is not
/// thrown away. Never for a job (a worker hands it back, its lease went with
/// the session) nor a retrain (its lock went with it too).
void store(db::Database& database, const db::EvaluationRecord& record, const EvaluationRunOptions& options) {
  try {
    db::store_evaluation(database, record, options.finish);
  } catch (const db::ConnectionLost&) {
    if (!options.reconnect || options.finish) throw;
    database = db::Database::connect_within(database.target(), kReconnectSeconds).take();
    db::store_evaluation(database, record);
  }
}

nlohmann::json summary_json(const evaluator::UpliftSummary& s) {
  nlohmann::json worst = nlohmann::json::array();
  for (const auto& w : s.worst)
    worst.push_back({{"module", w.name}, {"default", w.default_bytes}, {"learned", w.learned_bytes}, {"ratio", w.ratio()}});
  return {{"modules", s.modules},
          {"geomean_ratio", s.geomean_ratio},
          {"uplift", s.uplift},
          {"total_default", s.total_default},
          {"total_learned", s.total_learned},
          {"total_uplift", s.total_uplift},
          {"wins", s.wins},
          {"ties", s.ties},
          {"losses", s.losses},
          {"no_worse_share", s.no_worse_share},
          {"zero_size", s.zero_size},
          {"worst", worst}};
}

nlohmann::json result_json(const evaluator::EvaluationResult& r, const SelectedBuild& b, const SelectedSuite& s,
                           const policy::PolicyMetadata& p) {
  nlohmann::json failed = nlohmann::json::array(), links = nlohmann::json::array(),
                 packages = nlohmann::json::array();
  for (const auto& p : r.packages) packages.push_back({{"package", p.package}, {"summary", summary_json(p.summary)}});
  for (const auto& m : r.modules)
    for (const auto* h : {&m.by_default, &m.learned})
      if (!h->ok())
        failed.push_back({{"module", m.name}, {"heuristic", h == &m.by_default ? "default" : "learned"},
                          {"outcome", h->outcome}, {"message", h->message}});
  for (const auto& l : r.links)
    links.push_back({{"group", l.group}, {"ok", l.ok}, {"message", l.message}, {"default_text", l.default_text},
                     {"learned_text", l.learned_text}});
  return {{"build", b.label},
          {"commit", b.commit},
          {"suite", s.suite.name},
          {"policy", p.name},
          {"policy_hash", p.content_hash},
          {"summary", summary_json(r.summary)},
          {"packages", packages},
          // null with no binary linked under both: a summary of nothing would
          // read "0% no worse".
          {"linked",
           {{"summary", r.linked_summary.modules > 0 ? summary_json(r.linked_summary) : nlohmann::json(nullptr)},
            {"groups", links}}},
          {"failed", failed},
          {"not_consulted", r.not_consulted},
          {"defaults_shared", r.defaults_shared},
          {"defaults_checked", r.defaults_checked},
          {"warnings", r.warnings},
          {"compatibility", nlohmann::json::parse(r.compat.to_json())},
          {"seconds", r.seconds}};
}

std::vector<db::MeasurementRow> measurements_of(const evaluator::ModuleResult& m, db::Id bench) {
  std::vector<db::MeasurementRow> rows;
  for (const auto* h : {&m.by_default, &m.learned}) {
    const char* heuristic = h == &m.by_default ? "default" : "learned";
    if (!h->shared)  // a shared default took no compile of its own
      rows.push_back({bench, heuristic, evaluator::metric_name(evaluator::Metric::CompileSeconds), h->seconds});
    if (!h->ok()) continue;
    rows.push_back({bench, heuristic, evaluator::metric_name(evaluator::Metric::TextBytes), double(h->sizes.text)});
    rows.push_back({bench, heuristic, evaluator::metric_name(evaluator::Metric::CodeBytes), double(h->sizes.code)});
    if (h == &m.learned)
      rows.push_back({bench, heuristic, evaluator::metric_name(evaluator::Metric::Decisions), double(h->decisions)});
  }
  return rows;
}

/// A scratch directory no other run shares: two evaluations of the same
/// (build, policy, suite), or a killed run's orphaned compiles, must never
/// write into each other's objects, also across the machines that share a
/// data directory (containers often all run as pid 1: the host is part of it).
fs::path scratch_dir(const fs::path& data, db::Id eval_id) {
  static std::atomic<int> counter{0};
  return data / "eval" /
         (std::to_string(eval_id) + "-" + common::host_name() + "-" + common::pid_namespace() + "-" +
          std::to_string(getpid()) + "-" + std::to_string(counter++));
}

/// Whether nothing under `dir` was written for `idle`: a live evaluation
/// writes objects all the time (no compile runs for hours).
bool idle_for(const fs::path& dir, std::chrono::hours idle) {
  std::error_code ec;
  auto newest = fs::last_write_time(dir, ec);
  if (ec) return false;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (auto t = fs::last_write_time(it->path(), ec); !ec) newest = std::max(newest, t);
  return !ec && fs::file_time_type::clock::now() - newest > idle;
}

/// Removes the scratch directories of evaluations that ended without
/// removing them (a worker killed mid-evaluation): nothing else would, and a
/// suite's objects each time fill the disk over weeks. This host's and PID
/// namespace's whose process is gone go at once; any other (another host's
/// or container's, a restarted container's, one named before names held the
/// namespace) once nothing in it was written for a day. A live process's
/// stays.
void remove_orphaned_scratch(const fs::path& data) {
  constexpr std::chrono::hours kIdle{24};
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(data / "eval", ec)) {
    // <evaluation>-<host>-<pid namespace>-<pid>-<n>; a host may hold '-'
    auto name = e.path().filename().string();
    std::vector<std::size_t> dashes;  // the last three, from the right
    for (auto at = name.rfind('-'); at != std::string::npos && at > 0 && dashes.size() < 3;
         at = name.rfind('-', at - 1))
      dashes.push_back(at);
    auto first = name.find('-');
    bool gone = false;
    if (dashes.size() == 3 && first != std::string::npos && dashes[2] > first) {
      long pid = 0;
      auto digits = name.substr(dashes[1] + 1, dashes[0] - dashes[1] - 1);
      if (std::from_chars(digits.data(), digits.data() + digits.size(), pid).ec == std::errc())
        gone = common::process_gone_here(name.substr(first + 1, dashes[2] - first - 1),
                                         name.substr(dashes[2] + 1, dashes[1] - dashes[2] - 1), pid);
    }
    // Its compiles behind a wrapper that did not exec outlived it (only
    // the wrapper died with it): one blocked opening the dead run's ML
    // channel would wait for ever.
    if (gone)
      for (long pid : common::processes_naming(e.path())) kill(static_cast<pid_t>(pid), SIGKILL);
    if (gone || idle_for(e.path(), kIdle)) fs::remove_all(e.path(), ec);
  }
}

/// Moves an evaluation's objects out of eval/, whose directories the next
/// evaluation removes once their process is gone, to
/// <data>/objects/<evaluation id>: kept until their owner says. Never over
/// another's (an evaluation of the same id in another database on this data
/// directory, an earlier --keep-objects): the name is reserved by creating
/// it, then the objects renamed onto it. "" when they could not be kept:
/// said in `warnings`, not thrown, as the evaluation is stored already.
fs::path keep_objects(const fs::path& work_dir, const fs::path& data_dir, db::Id eval_id,
                      std::vector<std::string>& warnings) {
  std::error_code ec;
  auto base = data_dir / "objects" / std::to_string(eval_id);
  fs::create_directories(base.parent_path(), ec);
  fs::path kept;
  for (int n = 1; n < 1000 && kept.empty(); ++n) {
    auto candidate = n == 1 ? base : fs::path(base.string() + "-" + std::to_string(n));
    if (fs::create_directory(candidate, ec))
      kept = candidate;
    else if (ec)
      break;
  }
  std::string why = ec ? ec.message() : "no free name";
  if (!kept.empty()) {
    fs::rename(work_dir, kept, ec);
    if (ec == std::errc::cross_device_link) {  // another file system: copied
      fs::copy(work_dir, kept, fs::copy_options::recursive, ec);
      if (!ec) fs::remove_all(work_dir, ec), ec.clear();
    }
    if (ec) {
      why = ec.message();
      fs::remove_all(kept, ec);
      kept.clear();
    }
  }
  if (kept.empty())
    warnings.push_back("the objects could not be kept in " + base.parent_path().string() + ": " + why +
                       "; they are in " + work_dir.string() + " until the next evaluation");
  return kept;
}

/// The scratch directory of an evaluation an exception leaves (a lost
/// lease, a full disk, a bug): removed, as on every other way out.
struct RemoveOnThrow {
  fs::path dir;
  int exceptions = std::uncaught_exceptions();
  ~RemoveOnThrow() {
    std::error_code ec;
    if (std::uncaught_exceptions() > exceptions) fs::remove_all(dir, ec);
  }
};

std::string finish_json(db::Id eval_id, const evaluator::EvaluationResult& r) {
  return nlohmann::json{{"evaluation_id", eval_id},
                        {"uplift", r.summary.uplift},
                        {"total_uplift", r.summary.total_uplift},
                        {"failed_modules", r.failed}}
      .dump();
}

/// The evaluation stored with the rows of an earlier one of the same key, or
/// nothing when there is none to take.
std::optional<StoredEvaluation> reuse(db::Database& database, db::Id eval_id, db::Id policy_id, db::Id suite_id,
                                      const std::vector<db::Id>& bench_ids, const EvaluationKey& key,
                                      const SelectedBuild& build, const SelectedSuite& suite,
                                      const policy::PolicyMetadata& meta, const EvaluationRunOptions& options) {
  auto start = std::chrono::steady_clock::now();
  auto source = db::find_reusable_evaluation(database, policy_id, suite_id, key.key, eval_id, machine_failure_rule());
  if (!source) return std::nullopt;
  StoredEvaluation out{result_from_rows(suite.suite, bench_ids, *source), {}, eval_id, {}};
  // The row itself, measured before with this very compiler: a check-in
  // queued again (its repository moved: jobs are keyed by path) keeps it.
  bool kept = source->evaluation_id == eval_id;
  out.reused_from = kept ? "kept its evaluation " + std::to_string(eval_id) + ": measured before, identical compiler " +
                               key.compiler_digest.substr(0, 12)
                         : "reused from " + checkin_name(source->commit, source->subject) + "'s evaluation " +
                               std::to_string(source->evaluation_id) + ": identical compiler " +
                               key.compiler_digest.substr(0, 12);
  out.result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.json = result_json(out.result, build, suite, meta);
  out.json["reuse_key"] = key.key;
  if (!kept) {
    out.json["reused_from"] = {{"evaluation_id", source->evaluation_id},
                               {"commit", source->commit},
                               {"compiler", key.compiler_digest},
                               {"text", out.reused_from}};
  } else if (auto before = nlohmann::json::parse(source->summary_json, nullptr, false);
             before.is_object() && before.contains("reused_from")) {
    out.json["reused_from"] = before["reused_from"];  // where its rows came from stays true
  }
  db::EvaluationRecord record;
  record.evaluation_id = eval_id;
  record.results = std::move(source->results);
  record.measurements = std::move(source->measurements);
  record.summary_json = common::json_text(out.json);
  record.compat_json = source->compat_json;
  if (options.finish) options.finish->result_json = finish_json(eval_id, out.result);
  store(database, record, options);
  db::set_build_feature_report(database, *build.build_id, source->compat_json);
  return out;
}

/// An evaluation begun here and neither stored nor failed when an exception
/// leaves (a lost lease, a full disk, a bug) is let go, interrupted: held
/// by a worker that lives on, it would stay `running` and never be retried.
/// Stored or failed rows are left as they are (interrupt_evaluation takes
/// running rows only).
struct LetGoOnThrow {
  db::Database& database;
  db::Id id;
  int exceptions = std::uncaught_exceptions();
  ~LetGoOnThrow() {
    if (std::uncaught_exceptions() <= exceptions) return;
    try {
      db::interrupt_evaluation(database, id);
    } catch (const std::exception&) {  // the connection is gone, and the hold with it
    }
  }
};

}  // namespace

StoredEvaluation evaluate_and_store(db::Database& database, const SelectedBuild& build, const SelectedSuite& suite,
                                    const policy::PolicyModel& model, const EvaluationRunOptions& options) {
  // Its bitcode is read module by module: a rebuild of the suite meanwhile
  // would measure another suite's modules under this one's name.
  auto reading = evaluator::hold_suite(suite.dir).take();
  if (suite_identity(suite.dir, suite.suite) != suite.manifest_hash)
    throw common::Fatal("suite " + suite.suite.name + " was rebuilt since it was selected (" + suite.dir.string() +
                        "): run again to measure the suite as it is now");
  if (!build.build_id)
    throw common::Fatal("artifact directory " + build.label + " is not a build driftwatch recorded; use --repo and a check-in");
  policy::use_one_thread();
  const auto& meta = model.metadata();
  auto policy_id = db::upsert_policy(database, meta.name, meta.content_hash, meta.compiler_commit,
                                     meta.training.empty() ? "{}" : meta.training);
  std::vector<db::BenchmarkRow> rows;
  for (const auto& m : suite.suite.modules) rows.push_back({m.name, m.sha256, evaluator::language_name(m.language)});
  std::vector<db::Id> bench_ids;
  auto suite_id = db::upsert_suite(database, suite.suite.name, suite.manifest_hash,
                                   nlohmann::json{{"dir", suite.dir.string()}}.dump(), rows, &bench_ids);
  auto eval_id = db::begin_evaluation(database, *build.build_id, policy_id, suite_id, options.finish);
  LetGoOnThrow let_go{database, eval_id};
  // Before a reuse too: a sweep whose evaluations are all kept still clears
  // what killed ones left behind.
  remove_orphaned_scratch(options.data_dir);
  auto key = evaluation_key(build, suite, meta, options.compile_every_default);
  if (options.reuse && !key.key.empty())
    if (auto reused = reuse(database, eval_id, policy_id, suite_id, bench_ids, key, build, suite, meta, options))
      return std::move(*reused);

  evaluator::EvaluationOptions o;
  o.suite = &suite.suite;
  o.suite_dir = suite.dir;
  o.compiler = build.compiler;
  o.jobs = options.jobs;
  o.work_dir = scratch_dir(options.data_dir, eval_id);
  RemoveOnThrow scratch{o.work_dir};
  o.progress = options.progress;
  std::error_code ec;
  fs::remove_all(o.work_dir, ec);
  // A failure that may be the machine's fails this attempt (the row is let
  // go, interrupted), unless the job has no attempt left: then one the
  // policy or the compiler may have caused (a hang, a kill) is the
  // check-in's result. One only the machine can cause fails the job instead,
  // and stores nothing: as a result it would read as the policy unable to
  // run, an alert and a retraining. The next sweep tries the job again.
  auto retry_unless_last = [&](const common::Error& e) {
    if (!e.transient || (options.last_attempt && !e.machine_only)) return;
    db::interrupt_evaluation(database, eval_id);
    fs::remove_all(o.work_dir, ec);
    throw AttemptFailed("evaluating " + suite.suite.name + ": " + e.message, !e.machine_only);
  };
  policy::PolicyRunnerOptions runner_options;
  if (model.metadata().margin > 0) {  // it defers to the default decision: find where this compiler sends it
    auto slot = policy::detect_default_slot(build.compiler, o.work_dir / "probe");
    if (!slot) retry_unless_last(slot.error());
    if (!slot) {
      // The probe failing may be the compiler's failure, not the policy's:
      // one that cannot compile the probe without the policy either (a crash
      // on every input, a recipe's bad compile line) is broken, skipped as a
      // failed build is, and no reason to say the policy cannot run or to retrain.
      auto plain = policy::compile_probe_by_default(build.compiler, o.work_dir / "probe-default");
      // Without the policy, only a hang may be the compiler's own.
      if (policy::machine_failure(plain)) retry_unless_last({plain.error, true, !plain.timed_out});
      // A plain compile of the tiny probe that still times out on the last
      // attempt is a hanging compiler, not the policy's doing.
      bool broken = !plain.ok && (!policy::machine_failure(plain) || plain.timed_out);
      auto message =
          broken ? "the compiler cannot compile the probe module even without the policy: " + plain.error
                 : slot.error().message;
      db::fail_evaluation(database, eval_id, message, options.finish, broken);
      fs::remove_all(o.work_dir, ec);
      throw EvaluationFailed(message, broken);
    }
    runner_options.default_slot = *slot;
  }
  o.default_slot = runner_options.default_slot;
  o.compile_every_default = options.compile_every_default;
  if (options.finish)  // a job: the workers of this machine are in the job table
    o.machine_shared = [&database, owner = options.finish->owner] {
      try {
        return db::other_jobs_running_on_host(database, owner);
      } catch (const std::exception&) {
        return true;  // unknown: not taken for the compiler's hang
      }
    };
  o.learned = [&model, runner_options](policy::CompatReport* report) {
    return policy::make_policy_runner_copy(model, report, runner_options);
  };
  auto result = evaluator::evaluate(o);
  if (!result) retry_unless_last(result.error());
  // Too many compiles failed by the machine to try each again alone: stored,
  // their modules would read as the policy failing at this check-in (a
  // modules-failing alert, decide's losses, a retrain's verdict). A job
  // tries the whole evaluation again later, and its last attempt stores what
  // it measured; `eval` and `retrain` store nothing and say so.
  if (result && result->machine_failures_untried > 0)
    retry_unless_last({"the machine failed " + std::to_string(result->machine_failures_untried) +
                           " compiles, too many to try again one by one: " +
                           (options.finish ? "the whole evaluation is tried again while its job has attempts left"
                                           : "nothing is stored; run it again"),
                       true});
  // A compile that failed outside the compiler even when tried again alone
  // (driftwatch could not write or read its object: a full disk) says
  // nothing of this check-in: stored, the module would be missing from it
  // for good. Never the last attempt's result: the job fails, and is tried
  // afresh by the next sweep.
  if (result)
    for (const auto& m : result->modules)
      for (const auto* h : {&m.by_default, &m.learned})
        if (h->failed_outside_compiler())
          retry_unless_last({"a compile of " + m.name + " failed outside the compiler (" + h->outcome + ": " +
                                 h->message + "): " +
                                 (options.finish ? "the whole evaluation is tried again while its job has attempts left"
                                                 : "nothing is stored; run it again"),
                             true, true});
  if (!result) {
    db::set_build_feature_report(database, *build.build_id,
                                 "{\"error\": " + common::json_text(result.error().message) + "}");
    bool compiler_broken = result.error().message.rfind(evaluator::kCompilerBrokenError, 0) == 0;
    db::fail_evaluation(database, eval_id, result.error().message, options.finish, compiler_broken);
    fs::remove_all(o.work_dir, ec);
    throw EvaluationFailed(result.error().message, compiler_broken);
  }
  db::EvaluationRecord record;
  record.evaluation_id = eval_id;
  for (std::size_t i = 0; i < result->modules.size(); ++i) {
    const auto& m = result->modules[i];
    record.results.push_back({bench_ids[i], "default", m.by_default.outcome, m.by_default.message});
    record.results.push_back({bench_ids[i], "learned", m.learned.outcome, m.learned.message});
    auto ms = measurements_of(m, bench_ids[i]);
    record.measurements.insert(record.measurements.end(), ms.begin(), ms.end());
  }
  StoredEvaluation out{std::move(*result), {}, eval_id, {}};
  out.json = result_json(out.result, build, suite, meta);
  // What later evaluations of an identical compiler look for; a timeout or
  // another failure of the machine in any module keeps them from taking it
  // (db::find_reusable_evaluation).
  if (!key.key.empty()) out.json["reuse_key"] = key.key;
  record.summary_json = common::json_text(out.json);
  record.compat_json = out.result.compat.to_json();
  if (options.finish) options.finish->result_json = finish_json(eval_id, out.result);
  store(database, record, options);
  db::set_build_feature_report(database, *build.build_id, out.result.compat.to_json());
  if (options.keep_objects) out.kept_objects = keep_objects(o.work_dir, options.data_dir, eval_id, out.result.warnings);
  else fs::remove_all(o.work_dir, ec);
  return out;
}

}  // namespace sweep
