#pragma once
// Recording what driftwatch saw and measured. Plain value types in, ids out;
// every statement is parameterized and lives in db/.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "db/database.h"

namespace db {

using Id = std::int64_t;

struct CommitRow {
  std::string sha;
  std::vector<std::string> parents;
  std::string author;
  std::int64_t time = 0;  ///< seconds since the epoch
  std::string subject;
};

struct BuildRow {
  Id commit_id = 0;
  Id recipe_id = 0;
  std::string outcome;  ///< ok, configure-failed, build-failed, timeout, missing-artifact
  double seconds = 0;
  std::string artifact_dir;
  std::string log_path;
  std::string log_tail;
};

struct BuildRecord : BuildRow {
  Id id = 0;
};

struct BenchmarkRow {
  std::string name;
  std::string content_hash;
  std::string language;
};

/// One number of one module under one heuristic.
struct MeasurementRow {
  Id benchmark_id = 0;
  std::string heuristic;  ///< "default" or "learned"
  std::string metric;
  double value = 0;
};

/// The repository read at `location` (a path, or a name standing for
/// toolchains). A path recorded before gives its repository; a new one joins
/// the repository whose first-parent history has the same first commit,
/// `root` (a checkout moved or cloned again keeps its series, builds and
/// alerts), or starts one. `root` walks the whole history, so it is asked
/// once per path: for a new one, or one recorded before roots were; "" or
/// none: the path alone identifies it.
Id upsert_repository(Database& db, const std::string& location, const std::function<std::string()>& root = {});
/// The repository upsert_repository would give, for commands that only read
/// (a dashboard's role may not write): none when neither the path nor the
/// root is recorded. `root` is asked only for a path not recorded.
std::optional<Id> find_repository(Database& db, const std::string& location,
                                  const std::function<std::string()>& root = {});
/// A commit recorded again takes the new subject and time, but keeps its
/// recorded ones over an empty subject and a time of 0 (a toolchain
/// evaluated by hand has neither its label nor its date).
Id upsert_commit(Database& db, Id repository_id, const CommitRow& commit);
Id upsert_recipe(Database& db, const std::string& name, const std::string& content_hash, const std::string& body);
/// Inserts or replaces the build of (commit, recipe); an ok build is never
/// replaced by a failed one (the check-in builds; that machine did not).
Id record_build(Database& db, const BuildRow& build);
std::optional<BuildRecord> find_build(Database& db, Id commit_id, Id recipe_id);

Id upsert_policy(Database& db, const std::string& name, const std::string& content_hash,
                 const std::string& trained_commit, const std::string& metadata_json);
/// The suite row for (name, manifest hash) and its benchmarks' ids, in input order.
Id upsert_suite(Database& db, const std::string& name, const std::string& manifest_hash,
                const std::string& metadata_json, const std::vector<BenchmarkRow>& benchmarks,
                std::vector<Id>* benchmark_ids);
/// The evaluation of (build, policy, suite), created or reset to `running`
/// (one already `done` stays done, with its figures, until the new run's
/// replace them: a re-measure cut short or failed loses nothing);
/// this connection holds it (a shared advisory lock) until it is stored or
/// failed, or the connection closes. With `lease`, throws LeaseLost (and
/// changes nothing) unless that job is still its owner's.
Id begin_evaluation(Database& db, Id build_id, Id policy_id, Id suite_id, const struct JobFinish* lease = nullptr);
/// Marks `interrupted` every `running` evaluation that no connection holds:
/// the process running it died (Ctrl-C, SIGKILL). Returns how many.
int record_interrupted_evaluations(Database& db);
struct EvaluationCounts {
  int running = 0, done = 0, failed = 0, interrupted = 0;
};
EvaluationCounts count_evaluations(Database& db);

/// What happened to one module under one heuristic.
struct ModuleResultRow {
  Id benchmark_id = 0;
  std::string heuristic;  ///< "default" or "learned"
  std::string outcome;    ///< one of evaluator/evaluation.h's outcomes
  std::string message;
};

/// A finished evaluation, stored in one transaction: its module results and
/// measurements replace any earlier ones (through COPY), and its row is
/// marked done with the summary and the feature compatibility report.
struct EvaluationRecord {
  Id evaluation_id = 0;
  std::vector<ModuleResultRow> results;
  std::vector<MeasurementRow> measurements;
  std::string summary_json = "{}";
  std::string compat_json = "{}";
};
/// With `finish`, the evaluation's job is marked done in the same transaction.
void store_evaluation(Database& db, const EvaluationRecord& record, const struct JobFinish* finish = nullptr);
/// An evaluation that failed as a whole: marked failed, `message` kept as its
/// summary's "error", unless another run stored it meanwhile. With `lease`,
/// throws LeaseLost (and changes nothing) unless that job is still its owner's.
/// `compiler_broken`: the compiler compiled nothing even without the policy
/// (kept as the summary's "compiler_broken", which the series reads).
void fail_evaluation(Database& db, Id evaluation_id, const std::string& message,
                     const struct JobFinish* lease = nullptr, bool compiler_broken = false);
/// An evaluation given up by a process that goes on (a failed attempt that
/// will be retried): let go, and marked interrupted unless another process
/// runs it now (a worker that took the job over).
void interrupt_evaluation(Database& db, Id evaluation_id);
/// "running", "done", "failed" or "interrupted".
std::string evaluation_status(Database& db, Id evaluation_id);
/// The compatibility report of the policies that ran on a build (drift too).
void set_build_feature_report(Database& db, Id build_id, const std::string& report_json);
/// The builds whose artifacts are in `artifact_dir`, the newest of each
/// recipe, with the recipe as "name@hash12". Recipes that differ only in how
/// they compile share one cache entry, so there can be several.
std::vector<std::pair<Id, std::string>> builds_at_artifact_dir(Database& db, const std::string& artifact_dir);
std::int64_t count_module_results(Database& db, Id evaluation_id);

/// Replaces all measurements of an evaluation in one transaction, through COPY.
void replace_measurements(Database& db, Id evaluation_id, const std::vector<MeasurementRow>& rows);
/// The same with one INSERT per row; kept as the baseline the COPY benchmark measures against.
void replace_measurements_row_by_row(Database& db, Id evaluation_id, const std::vector<MeasurementRow>& rows);
std::int64_t count_measurements(Database& db, Id evaluation_id);

}  // namespace db
