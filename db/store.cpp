#include "db/store.h"

#include "common/text.h"
#include "db/connection_impl.h"
#include "db/jobs.h"

namespace db {
namespace {

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : " ") + s;
  return out;
}

template <class... Args>
Id returning_id(Database& db, const char* what, const std::string& sql, Args&&... args) {
  return db.impl().guarded(what, [&] {
    pqxx::work tx(db.impl().conn);
    auto id = tx.exec_params1(sql, std::forward<Args>(args)...)[0].template as<Id>();
    tx.commit();
    return id;
  });
}

/// The row of a repository read at `location` before: its id and whether its root was never asked.
constexpr const char* kRepositoryAt =
    "SELECT id, root IS NULL FROM repositories WHERE location = $1 OR $1 = ANY(also_at) ORDER BY id LIMIT 1";
/// The repository whose first-parent history starts at commit $1 (not '').
constexpr const char* kRepositoryWithRoot = "SELECT id FROM repositories WHERE root = $1";

/// The root upsert_repository or find_repository was given, asked now; "" without one.
std::string ask(const std::function<std::string()>& root) { return root ? root() : std::string(); }

}  // namespace

Id upsert_repository(Database& db, const std::string& location, const std::function<std::string()>& root) {
  return db.impl().guarded("recording a repository", [&] {
    pqxx::work tx(db.impl().conn);
    // Writers of one root take turns: a row takes a root only when no other
    // row holds it, and a new path joins the row that does.
    auto lock = [&](const std::string& r) {
      if (!r.empty()) tx.exec_params("SELECT pg_advisory_xact_lock(hashtext('driftwatch repository ' || $1::text))", r);
    };
    auto known = tx.exec_params(kRepositoryAt, location);
    if (!known.empty()) {
      auto id = known[0][0].as<Id>();
      // Recorded before repositories had roots: learn it once ('' when there
      // is none, or another row took it first: two paths of one history
      // recorded apart), so a later move of this checkout finds its series.
      if (known[0][1].as<bool>()) {
        auto r = ask(root);
        lock(r);
        tx.exec_params("UPDATE repositories SET root = CASE WHEN $2::text <> '' AND NOT EXISTS "
                       "(SELECT 1 FROM repositories o WHERE o.root = $2) THEN $2 ELSE '' END "
                       "WHERE id = $1 AND root IS NULL",
                       id, r);
      }
      tx.commit();
      return id;
    }
    // A path not seen before: the repository whose history has this root is
    // this one, moved or cloned again.
    auto r = ask(root);
    lock(r);
    if (!r.empty())
      if (auto same = tx.exec_params(kRepositoryWithRoot, r); !same.empty()) {
        auto id = same[0][0].as<Id>();
        tx.exec_params("UPDATE repositories SET also_at = array_append(also_at, $2) "
                       "WHERE id = $1 AND location <> $2 AND NOT ($2 = ANY(also_at))",
                       id, location);
        tx.commit();
        return id;
      }
    // Another writer of the same path may insert it meanwhile: its row wins.
    auto made = tx.exec_params(
        "INSERT INTO repositories (location, root) VALUES ($1, CASE WHEN $3::boolean THEN $2::text END) "
        "ON CONFLICT DO NOTHING RETURNING id",
        location, r, static_cast<bool>(root));
    auto id = !made.empty() ? made[0][0].as<Id>() : tx.exec_params1(kRepositoryAt, location)[0].as<Id>();
    tx.commit();
    return id;
  });
}

std::optional<Id> find_repository(Database& db, const std::string& location,
                                  const std::function<std::string()>& root) {
  return db.impl().guarded("reading a repository", [&]() -> std::optional<Id> {
    pqxx::read_transaction tx(db.impl().conn);
    if (auto known = tx.exec_params(kRepositoryAt, location); !known.empty()) return known[0][0].as<Id>();
    auto r = ask(root);
    if (r.empty()) return std::nullopt;
    auto same = tx.exec_params(kRepositoryWithRoot, r);
    if (same.empty()) return std::nullopt;
    return same[0][0].as<Id>();
  });
}

Id upsert_commit(Database& db, Id repository_id, const CommitRow& c) {
  return returning_id(db, "recording a commit",
                      "INSERT INTO commits (repository_id, sha, parents, author, committed_at, subject) "
                      "VALUES ($1, $2, $3, $4, to_timestamp($5), $6) "
                      "ON CONFLICT (repository_id, sha) DO UPDATE SET "
                      "subject = CASE WHEN EXCLUDED.subject <> '' THEN EXCLUDED.subject ELSE commits.subject END, "
                      "committed_at = CASE WHEN $5 <> 0 THEN EXCLUDED.committed_at ELSE commits.committed_at END "
                      "RETURNING id",
                      repository_id, c.sha, join(c.parents), common::valid_utf8(c.author), c.time,
                      common::valid_utf8(c.subject));
}

Id upsert_recipe(Database& db, const std::string& name, const std::string& hash, const std::string& body) {
  return returning_id(db, "recording a recipe",
                      "INSERT INTO recipes (name, content_hash, body) VALUES ($1, $2, $3) "
                      "ON CONFLICT (content_hash) DO UPDATE SET name = EXCLUDED.name RETURNING id",
                      name, hash, body);
}

#define KEEP_OK(column) \
  "CASE WHEN builds.outcome = 'ok' AND EXCLUDED.outcome <> 'ok' THEN builds." column " ELSE EXCLUDED." column " END"
#define KEEP_OK_NOW "CASE WHEN builds.outcome = 'ok' AND EXCLUDED.outcome <> 'ok' THEN builds.built_at ELSE now() END"

Id record_build(Database& db, const BuildRow& b) {
  return returning_id(db, "recording a build",
                      "INSERT INTO builds (commit_id, recipe_id, outcome, seconds, artifact_dir, log_path, log_tail) "
                      "VALUES ($1, $2, $3, $4, $5, $6, $7) "
                      // A check-in that built once does build: another machine's (or a later)
                      // failure to build it says something of that machine, so it never
                      // turns an ok row into a broken check-in for drift and bisection.
                      "ON CONFLICT (commit_id, recipe_id) DO UPDATE SET "
                      "outcome = " KEEP_OK("outcome") ", seconds = " KEEP_OK("seconds") ", "
                      "artifact_dir = " KEEP_OK("artifact_dir") ", log_path = " KEEP_OK("log_path") ", "
                      "log_tail = " KEEP_OK("log_tail") ", built_at = " KEEP_OK_NOW " "
                      "RETURNING id",
                      b.commit_id, b.recipe_id, b.outcome, b.seconds, b.artifact_dir, b.log_path,
                      common::valid_utf8(b.log_tail));
}
#undef KEEP_OK
#undef KEEP_OK_NOW

std::optional<BuildRecord> find_build(Database& db, Id commit_id, Id recipe_id) {
  return db.impl().guarded("reading a build", [&]() -> std::optional<BuildRecord> {
    pqxx::read_transaction tx(db.impl().conn);
    auto r = tx.exec_params(
        "SELECT id, outcome, seconds, artifact_dir, log_path, log_tail FROM builds "
        "WHERE commit_id = $1 AND recipe_id = $2",
        commit_id, recipe_id);
    if (r.empty()) return std::nullopt;
    BuildRecord b;
    b.id = r[0][0].as<Id>();
    b.commit_id = commit_id;
    b.recipe_id = recipe_id;
    b.outcome = r[0][1].as<std::string>();
    b.seconds = r[0][2].as<double>();
    b.artifact_dir = r[0][3].as<std::string>();
    b.log_path = r[0][4].as<std::string>();
    b.log_tail = r[0][5].as<std::string>();
    return b;
  });
}

Id upsert_policy(Database& db, const std::string& name, const std::string& hash, const std::string& trained_commit,
                 const std::string& metadata_json) {
  return returning_id(db, "recording a policy",
                      "INSERT INTO policies (name, content_hash, trained_commit, metadata) "
                      "VALUES ($1, $2, $3, $4::jsonb) "
                      "ON CONFLICT (content_hash) DO UPDATE SET name = EXCLUDED.name RETURNING id",
                      name, hash, trained_commit, metadata_json);
}

Id upsert_suite(Database& db, const std::string& name, const std::string& manifest_hash,
                const std::string& metadata_json, const std::vector<BenchmarkRow>& benchmarks,
                std::vector<Id>* benchmark_ids) {
  return db.impl().guarded("recording a suite", [&] {
    pqxx::work tx(db.impl().conn);
    auto suite_id = tx.exec_params1(
                          "INSERT INTO suites (name, manifest_hash, metadata) VALUES ($1, $2, $3::jsonb) "
                          "ON CONFLICT (name, manifest_hash) DO UPDATE SET metadata = EXCLUDED.metadata "
                          "RETURNING id",
                          name, manifest_hash, metadata_json)[0]
                        .as<Id>();
    if (benchmark_ids) benchmark_ids->clear();
    for (const auto& b : benchmarks) {
      auto id = tx.exec_params1(
                      "INSERT INTO benchmarks (suite_id, name, content_hash, language) VALUES ($1, $2, $3, $4) "
                      "ON CONFLICT (suite_id, name) DO UPDATE SET content_hash = EXCLUDED.content_hash "
                      "RETURNING id",
                      suite_id, b.name, b.content_hash, b.language)[0]
                    .as<Id>();
      if (benchmark_ids) benchmark_ids->push_back(id);
    }
    tx.commit();
    return suite_id;
  });
}

namespace {
// Who is running an evaluation: a shared session advisory lock on
// (kEvaluationLock, id), held by the connection of every process running it.
// PostgreSQL releases it when that process dies however it died (Ctrl-C,
// SIGKILL, a lost machine), so a `running` row nobody holds was interrupted.
constexpr const char* kEvaluationLock = "hashtext('driftwatch evaluation')";

/// SQL: a session holds evaluation `id`'s lock (`also` narrows which: this
/// one, say). One test for who runs an evaluation, wherever it is asked.
std::string held(const std::string& id, const std::string& also = "") {
  // pg_locks lists the whole cluster's locks: another database's evaluation
  // with the same id must not count as holding this one.
  return std::string("EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.objsubid = 2 AND l.granted "
                     "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
                     "AND l.classid = (") +
         kEvaluationLock + ")::oid AND l.objid = (" + id + " & 2147483647)::int::oid" + also + ")";
}
}  // namespace

Id begin_evaluation(Database& db, Id build_id, Id policy_id, Id suite_id, const JobFinish* lease) {
  return db.impl().guarded("starting an evaluation", [&] {
    pqxx::work tx(db.impl().conn);
    // A worker whose lease another took must not reset that worker's row.
    if (lease) detail::check_lease_in(tx, *lease);
    auto id = tx.exec_params1(
                    "INSERT INTO evaluations (build_id, policy_id, suite_id) VALUES ($1, $2, $3) "
                    "ON CONFLICT (build_id, policy_id, suite_id) DO UPDATE SET "
                    // A stored evaluation measured again keeps its figures and
                    // status until the new ones replace them in store_evaluation
                    // (or fail_evaluation). So does one stored failed (the
                    // check-in's result: the policy cannot run there): reset to
                    // running, a re-run cut short (a retrain at this build, an
                    // `eval`) would leave it interrupted, its error and its place
                    // in the series lost, and its job done, never queued again.
                    "status = CASE WHEN evaluations.status IN ('done', 'failed') THEN evaluations.status "
                    "ELSE 'running' END, "
                    "started_at = CASE WHEN evaluations.status IN ('done', 'failed') THEN evaluations.started_at "
                    "ELSE now() END, "
                    "finished_at = CASE WHEN evaluations.status IN ('done', 'failed') THEN evaluations.finished_at END "
                    "RETURNING id",
                    build_id, policy_id, suite_id)[0]
                  .as<Id>();
    // Taken before the row commits, so nobody ever sees it running unheld.
    tx.exec_params(
        std::string("SELECT pg_advisory_lock_shared(") + kEvaluationLock + ", ($1::bigint & 2147483647)::int)", id);
    tx.commit();
    return id;
  });
}

int record_interrupted_evaluations(Database& db) {
  return db.impl().guarded("recording interrupted evaluations", [&] {
    try {
      pqxx::work tx(db.impl().conn);
      // A hot standby (or a read-only default): nothing to record from here.
      if (tx.exec1("SELECT current_setting('transaction_read_only') = 'on'")[0].as<bool>()) return 0;
      auto r = tx.exec("UPDATE evaluations e SET status = 'interrupted', finished_at = now() "
                       "WHERE status = 'running' AND NOT " + held("e.id"));
      tx.commit();
      return static_cast<int>(r.affected_rows());
    } catch (const pqxx::insufficient_privilege&) {
      // A role that may only read (a report's): nothing to record from here,
      // and reading must still work. PostgreSQL checks the privilege even
      // when no row matches. (libpqxx 6 leaves sqlstate() empty here.)
      return 0;
    }
  });
}

EvaluationCounts count_evaluations(Database& db) {
  return db.impl().guarded("counting evaluations", [&] {
    pqxx::read_transaction tx(db.impl().conn);
    EvaluationCounts c;
    for (const auto& row : tx.exec("SELECT status, count(*) FROM evaluations GROUP BY status")) {
      auto status = row[0].as<std::string>();
      int n = row[1].as<int>();
      if (status == "running") c.running = n;
      else if (status == "done") c.done = n;
      else if (status == "failed") c.failed = n;
      else if (status == "interrupted") c.interrupted = n;
    }
    return c;
  });
}

namespace {
void release_evaluation(Database& db, Id evaluation_id) {
  db.impl().guarded("releasing an evaluation", [&] {
    pqxx::nontransaction nt(db.impl().conn);
    // Only when this session holds it: releasing twice (a failed write, then
    // the caller's clean-up) would make PostgreSQL print a warning.
    nt.exec_params(std::string("SELECT pg_advisory_unlock_shared(") + kEvaluationLock +
                       ", ($1::bigint & 2147483647)::int) WHERE " +
                       held("$1::bigint", " AND l.pid = pg_backend_pid() AND l.mode = 'ShareLock'"),
                   evaluation_id);
  });
}
/// After a failed write: let the row go (a worker lives on, and its hold
/// would keep a row it could not store `running` for good), keeping the
/// write's error rather than the release's.
void release_after_failure(Database& db, Id evaluation_id) {
  try {
    release_evaluation(db, evaluation_id);
  } catch (const std::exception&) {  // a lost connection released it already
  }
}
}  // namespace

void replace_measurements(Database& db, Id evaluation_id, const std::vector<MeasurementRow>& rows) {
  db.impl().guarded("storing measurements", [&] {
    pqxx::work tx(db.impl().conn);
    tx.exec_params("DELETE FROM measurements WHERE evaluation_id = $1", evaluation_id);
    // The table-only constructor: libpqxx 6.4's column-list variants are buggy.
    pqxx::stream_to stream(tx, "measurements");
    for (const auto& m : rows) stream << std::make_tuple(evaluation_id, m.benchmark_id, m.heuristic, m.metric, m.value);
    stream.complete();
    tx.commit();
  });
}

void replace_measurements_row_by_row(Database& db, Id evaluation_id, const std::vector<MeasurementRow>& rows) {
  db.impl().guarded("storing measurements", [&] {
    auto& conn = db.impl().conn;
    conn.prepare("dw_insert_measurement",
                 "INSERT INTO measurements (evaluation_id, benchmark_id, heuristic, metric, value) "
                 "VALUES ($1, $2, $3, $4, $5)");
    pqxx::work tx(conn);
    tx.exec_params("DELETE FROM measurements WHERE evaluation_id = $1", evaluation_id);
    for (const auto& m : rows)
      tx.exec_prepared("dw_insert_measurement", evaluation_id, m.benchmark_id, m.heuristic, m.metric, m.value);
    tx.commit();
    conn.unprepare("dw_insert_measurement");
  });
}

void store_evaluation(Database& db, const EvaluationRecord& r, const JobFinish* finish) {
  try {
    db.impl().guarded("storing an evaluation", [&] {
      pqxx::work tx(db.impl().conn);
      // Two identical evaluations can share one row and finish together: each
      // deletes what it cannot yet see of the other's and inserts, and the
      // second insert hits the first's rows. Serialized, the later store
      // replaces the earlier one's (equal) rows. Not kEvaluationLock: both
      // hold that one shared while they evaluate.
      tx.exec_params(
          "SELECT pg_advisory_xact_lock(hashtext('driftwatch store evaluation'), ($1::bigint & 2147483647)::int)",
          r.evaluation_id);
      tx.exec_params("DELETE FROM measurements WHERE evaluation_id = $1", r.evaluation_id);
      tx.exec_params("DELETE FROM module_results WHERE evaluation_id = $1", r.evaluation_id);
      {
        pqxx::stream_to results(tx, "module_results");
        for (const auto& m : r.results)
          results << std::make_tuple(r.evaluation_id, m.benchmark_id, m.heuristic, m.outcome,
                                     common::valid_utf8(m.message));  // a compiler's bytes: any encoding
        results.complete();
      }
      {
        pqxx::stream_to measurements(tx, "measurements");
        for (const auto& m : r.measurements)
          measurements << std::make_tuple(r.evaluation_id, m.benchmark_id, m.heuristic, m.metric, m.value);
        measurements.complete();
      }
      tx.exec_params(
          "UPDATE evaluations SET status = 'done', finished_at = now(), summary = $2::jsonb, compat_report = $3::jsonb "
          "WHERE id = $1",
          r.evaluation_id, r.summary_json, r.compat_json);
      if (finish) detail::finish_job_in(tx, *finish, kJobDone, "");
      tx.commit();
    });
  } catch (...) {
    release_after_failure(db, r.evaluation_id);
    throw;
  }
  release_evaluation(db, r.evaluation_id);
}

void fail_evaluation(Database& db, Id evaluation_id, const std::string& message, const JobFinish* lease,
                     bool compiler_broken) {
  try {
    db.impl().guarded("marking an evaluation failed", [&] {
      pqxx::work tx(db.impl().conn);
      if (lease) detail::check_lease_in(tx, *lease);
      // Only the run that holds it: a row another run stored done stays done.
      // One stored failed and run again takes the new run's reason.
      tx.exec_params(
          "UPDATE evaluations SET status = 'failed', finished_at = now(), "
          "summary = jsonb_build_object('error', $2::text, 'compiler_broken', $3::boolean) "
          "WHERE id = $1 AND status IN ('running', 'failed')",
          evaluation_id, common::valid_utf8(message), compiler_broken);
      tx.commit();
    });
  } catch (...) {
    release_after_failure(db, evaluation_id);
    throw;
  }
  release_evaluation(db, evaluation_id);
}

void interrupt_evaluation(Database& db, Id evaluation_id) {
  release_evaluation(db, evaluation_id);
  // Only if nobody else runs it now: a worker that took over this job (its
  // lease expired here) holds the same row, running, and keeps it.
  db.impl().guarded("marking an evaluation interrupted", [&] {
    pqxx::work tx(db.impl().conn);
    tx.exec_params("UPDATE evaluations e SET status = 'interrupted', finished_at = now() "
                   "WHERE id = $1 AND status = 'running' AND NOT " + held("e.id"),
                   evaluation_id);
    tx.commit();
  });
}

std::string evaluation_status(Database& db, Id evaluation_id) {
  return db.impl().guarded("reading an evaluation's status", [&] {
    pqxx::read_transaction tx(db.impl().conn);
    return tx.exec_params1("SELECT status FROM evaluations WHERE id = $1", evaluation_id)[0].as<std::string>();
  });
}

void set_build_feature_report(Database& db, Id build_id, const std::string& report_json) {
  db.impl().guarded("recording a feature report", [&] {
    pqxx::work tx(db.impl().conn);
    tx.exec_params("UPDATE builds SET feature_report = $2::jsonb WHERE id = $1", build_id, report_json);
    tx.commit();
  });
}

std::vector<std::pair<Id, std::string>> builds_at_artifact_dir(Database& db, const std::string& artifact_dir) {
  return db.impl().guarded("finding a build", [&] {
    pqxx::read_transaction tx(db.impl().conn);
    std::vector<std::pair<Id, std::string>> out;
    for (const auto& row : tx.exec_params("SELECT DISTINCT ON (b.recipe_id) b.id, r.name || '@' || left(r.content_hash, 12) "
                                          "FROM builds b JOIN recipes r ON r.id = b.recipe_id "
                                          "WHERE b.artifact_dir = $1 ORDER BY b.recipe_id, b.id DESC",
                                          artifact_dir))
      out.emplace_back(row[0].as<Id>(), row[1].as<std::string>());
    return out;
  });
}

std::int64_t count_module_results(Database& db, Id evaluation_id) {
  return db.impl().guarded("counting module results", [&] {
    pqxx::read_transaction tx(db.impl().conn);
    return tx.exec_params1("SELECT count(*) FROM module_results WHERE evaluation_id = $1", evaluation_id)[0]
        .as<std::int64_t>();
  });
}

std::int64_t count_measurements(Database& db, Id evaluation_id) {
  return db.impl().guarded("counting measurements", [&] {
    pqxx::read_transaction tx(db.impl().conn);
    return tx.exec_params1("SELECT count(*) FROM measurements WHERE evaluation_id = $1", evaluation_id)[0]
        .as<std::int64_t>();
  });
}

}  // namespace db
