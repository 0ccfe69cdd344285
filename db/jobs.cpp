#include "db/jobs.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

#include "common/text.h"
#include "db/connection_impl.h"

namespace db {

// The job row TABLE was planned by PROJECT (its own row names only the
// first project that planned it; job_projects names them all).
// A job queued again from nothing: every trace of its attempts gone, so its
// next failures are counted afresh (jobs retry, a requeued sweep, a rebuild).
#define QUEUED_AFRESH                                                                                       \
  "state = 'queued', attempts = 0, error = NULL, failed_hosts = '{}', machine_failures = 0, timeouts = 0, " \
  "given_back = 0"

// A build job done without a compiler, which a person may run again: its
// outcome is recorded as the check-in's, but a failure the machine caused
// (a linker killed by a bus error on both tries) can look like the check-in's own.
#define RETRYABLE_BUILD(job)                                 \
  "(" job ".kind = 'build' AND (COALESCE(" job               \
  ".result->>'outcome', '') IN ('timeout', 'build-failed', " \
  "'configure-failed', 'missing-artifact') OR COALESCE((" job ".result->>'retryable')::boolean, false)))"
// A build job run again by a person builds from scratch: its cached
// failure is what is being doubted.
#define REBUILT_PAYLOAD(job)                                              \
  "CASE WHEN " job ".kind = 'build' AND " job ".state = 'done' THEN " job \
  ".payload || '{\"rebuild\": true}'::jsonb "                             \
  "ELSE " job ".payload END"

#define OF_PROJECT(table, project) \
  "(" table ".project = " project " OR EXISTS (SELECT 1 FROM job_projects jp WHERE jp.job_id = " table \
  ".id AND jp.project = " project "))"

namespace {

/// A session-level advisory lock named "driftwatch <name>" for the project.
bool try_lock(Database& db, const char* name, const char* taking, const std::string& project) {
  return db.impl().guarded(taking, [&] {
    pqxx::nontransaction nt(db.impl().conn);
    return nt.exec_params1("SELECT pg_try_advisory_lock(hashtext($1), hashtext($2))", std::string("driftwatch ") + name,
                           project)[0]
        .as<bool>();
  });
}

}  // namespace

bool try_lock_project(Database& db, const std::string& project) {
  return try_lock(db, "sweep", "taking the sweep lock", project);
}

int session_pid(Database& db) { return db.impl().backend_pid; }

bool retake_project_lock(Database& db, const std::string& project, int lost_pid) {
  if (try_lock_project(db, project)) return true;
  if (lost_pid <= 0) return false;
  // Only the lost session, and only while it holds this project's sweep
  // lock: its pid may since be another session's. The two keys as
  // pg_try_advisory_lock(int4, int4) stores them (classid, objid; objsubid 2).
  bool ended = db.impl().guarded("ending the lost session that holds the sweep lock", [&] {
    pqxx::nontransaction nt(db.impl().conn);
    auto r = nt.exec_params(
        "SELECT pg_terminate_backend(l.pid) FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND "
        "l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND "
        "l.pid = $1 AND l.objsubid = 2 AND l.classid::bigint = (hashtext($2)::bigint & 4294967295) AND "
        "l.objid::bigint = (hashtext($3)::bigint & 4294967295)",
        lost_pid, std::string("driftwatch sweep"), project);
    return !r.empty() && r[0][0].as<bool>();
  });
  if (!ended) return false;
  // The session ends (and its locks go) shortly after it is signalled.
  for (int i = 0; i < 50; ++i) {
    if (try_lock_project(db, project)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

bool try_lock_retrain(Database& db, const std::string& project) {
  return try_lock(db, "retrain", "taking the retrain lock", project);
}

int interrupt_dead_sweeps(Database& db, const std::string& project) {
  return db.impl().guarded("marking sweeps that ended without finishing", [&] {
    pqxx::work tx(db.impl().conn);
    auto r = tx.exec_params(
        "UPDATE sweeps SET state = 'interrupted', finished_at = now(), "
        "message = 'ended without finishing: killed, or lost its database or machine' "
        "WHERE project = $1 AND state = 'running'",
        project);
    tx.commit();
    return static_cast<int>(r.affected_rows());
  });
}

Id begin_sweep(Database& db, const std::string& project, const std::string& project_file) {
  return db.impl().guarded("starting a sweep", [&] {
    pqxx::work tx(db.impl().conn);
    auto id = tx.exec_params1("INSERT INTO sweeps (project, project_file) VALUES ($1, $2) RETURNING id", project,
                              project_file)[0]
                  .as<Id>();
    tx.commit();
    return id;
  });
}

std::string last_project_file(Database& db, const std::string& project) {
  return db.impl().guarded("reading the project's last sweep", [&] {
    pqxx::read_transaction tx(db.impl().conn);
    auto r = tx.exec_params(
        "SELECT project_file FROM sweeps WHERE project = $1 AND project_file <> '' ORDER BY id DESC LIMIT 1", project);
    return r.empty() ? std::string() : r[0][0].as<std::string>();
  });
}

void finish_sweep(Database& db, Id sweep_id, const std::string& state, const std::string& head_sha, int planned,
                  const std::string& message, const std::string& sampling) {
  db.impl().guarded("finishing a sweep", [&] {
    pqxx::work tx(db.impl().conn);
    tx.exec_params(
        "UPDATE sweeps SET state = $2, head_sha = $3, planned = $4, message = $5, sampling = $6, finished_at = now() "
        "WHERE id = $1",
        sweep_id, state, head_sha, planned, message, sampling);
    tx.commit();
  });
}

std::optional<SweepState> newest_sweep(Database& db, const std::string& project) {
  return db.impl().guarded("reading the newest sweep", [&]() -> std::optional<SweepState> {
    pqxx::read_transaction tx(db.impl().conn);
    auto r = tx.exec_params(
        "SELECT id, state, to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), "
        "  COALESCE(message, '') FROM sweeps WHERE project = $1 ORDER BY id DESC LIMIT 1",
        project);
    if (r.empty()) return std::nullopt;
    return SweepState{r[0][0].as<Id>(), r[0][1].as<std::string>(), r[0][2].as<std::string>(),
                      r[0][3].as<std::string>()};
  });
}

std::vector<std::string> known_projects(Database& db) {
  return db.impl().guarded("listing the projects", [&] {
    pqxx::read_transaction tx(db.impl().conn);
    std::vector<std::string> out;
    for (const auto& row : tx.exec("SELECT project FROM sweeps UNION SELECT project FROM job_projects ORDER BY 1"))
      out.push_back(row[0].as<std::string>());
    return out;
  });
}

bool sweep_exists(Database& db, Id sweep_id, const std::string& project) {
  return db.impl().guarded("looking for a sweep", [&] {
    pqxx::read_transaction tx(db.impl().conn);
    return !tx.exec_params("SELECT 1 FROM sweeps WHERE id = $1 AND ($2 = '' OR project = $2)", sweep_id, project)
                .empty();
  });
}

std::optional<LastSweep> last_sweep(Database& db, const std::string& project) {
  return db.impl().guarded("reading the last sweep", [&]() -> std::optional<LastSweep> {
    pqxx::read_transaction tx(db.impl().conn);
    auto r = tx.exec_params(
        "SELECT head_sha, sampling FROM sweeps WHERE project = $1 AND state = 'done' AND head_sha <> '' "
        "ORDER BY id DESC LIMIT 1",
        project);
    if (r.empty()) return std::nullopt;
    return LastSweep{r[0][0].as<std::string>(), r[0][1].as<std::string>()};
  });
}

// A failed job is tried again; a skipped one (its build did not give a
// compiler) only once its build is tried again, or has given one since (a
// build two projects share, retried and rebuilt by the other's sweep: its
// evaluations of this project were left skipped for good); a done evaluation job whose
// evaluation row is no longer done, failed or running (one an older driftwatch
// reset to running for a re-run that was cut short: a stored row now keeps its
// status while run again) too, or its check-in would drop out of the series.
#define LOST_EVALUATION                                                                            \
  "(jobs.state = 'done' AND jobs.kind = 'eval' AND jobs.result ? 'evaluation_id' AND NOT EXISTS ("  \
  "SELECT 1 FROM evaluations ev WHERE ev.id = (jobs.result->>'evaluation_id')::bigint "            \
  "AND ev.status IN ('done', 'failed', 'running')))"
#define BUILD_TRIED_AGAIN                                                                  \
  "(jobs.state = 'skipped' AND EXISTS (SELECT 1 FROM jobs d WHERE d.id = jobs.depends_on AND " \
  "(d.state IN ('queued', 'running') OR (d.state = 'done' AND d.result->>'outcome' = 'ok'))))"
// A build job that gave no compiler, where one was built since under the
// same recipe (`driftwatch build --rebuild` after a failure the machine
// caused): run again, it is served from the cache, and its evaluations follow.
#define BUILT_SINCE                                                                                          \
  "(jobs.kind = 'build' AND jobs.state = 'done' AND COALESCE(jobs.result->>'outcome', '') <> 'ok' AND "      \
  "EXISTS (SELECT 1 FROM builds bu JOIN commits co ON co.id = bu.commit_id JOIN recipes re ON re.id = "      \
  "bu.recipe_id WHERE co.sha = jobs.payload->>'sha' AND re.content_hash = jobs.payload->>'recipe_hash' AND " \
  "bu.outcome = 'ok' AND bu.built_at > COALESCE(jobs.finished_at, jobs.updated_at)))"
// A job a person cancelled is left so by the rest of the sweep that ran it
// (its bisection planning the check-in again): the next sweep takes it back.
#define CANCELLED_IN_THIS_SWEEP \
  "(jobs.sweep_id IS NOT DISTINCT FROM NULLIF($8, 0) AND starts_with(COALESCE(jobs.error, ''), $9))"
#define RETRY_CONDITION                                                                                       \
  "((jobs.state = 'failed' AND NOT " CANCELLED_IN_THIS_SWEEP ") OR " BUILD_TRIED_AGAIN " OR " LOST_EVALUATION \
  " OR " BUILT_SINCE ")"

std::vector<Id> enqueue_jobs(Database& db, const std::string& project, Id sweep_id, const std::vector<JobSpec>& jobs) {
  return db.impl().guarded("enqueueing jobs", [&] {
    pqxx::work tx(db.impl().conn);
    std::vector<Id> ids;
    for (const auto& j : jobs) {
      Id dep = j.depends_on >= 0 ? ids.at(j.depends_on) : 0;
      // The no-op update on a done job makes RETURNING give its id.
      auto id =
          tx.exec_params1(
                "INSERT INTO jobs (project, kind, key, payload, priority, depends_on, max_attempts, sweep_id) "
                "VALUES ($1, $2, $3, $4::jsonb, $5, NULLIF($6, 0), $7, NULLIF($8, 0)) "
                "ON CONFLICT (key) DO UPDATE SET "
                // One column a line, as the reset reads:
                // clang-format off
                      "  state = CASE WHEN " RETRY_CONDITION " THEN 'queued' ELSE jobs.state END, "
                      "  attempts = CASE WHEN " RETRY_CONDITION " THEN 0 ELSE jobs.attempts END, "
                      "  failed_hosts = CASE WHEN " RETRY_CONDITION " THEN '{}' ELSE jobs.failed_hosts END, "
                      "  machine_failures = CASE WHEN " RETRY_CONDITION " THEN 0 ELSE jobs.machine_failures END, "
                      "  timeouts = CASE WHEN " RETRY_CONDITION " THEN 0 ELSE jobs.timeouts END, "
                      "  given_back = CASE WHEN " RETRY_CONDITION " THEN 0 ELSE jobs.given_back END, "
                      "  error = CASE WHEN " RETRY_CONDITION " THEN NULL ELSE jobs.error END, "
                      "  priority = GREATEST(jobs.priority, EXCLUDED.priority), updated_at = now(), "
                      // Same key, same content; but paths (the policy file moved to the
                      // farm's shared mount, the suite's directory) are today's: a job
                      // run again with yesterday's would fail as it did.
                      "  payload = CASE WHEN jobs.state IN ('done', 'skipped') AND NOT " RETRY_CONDITION
                      "    THEN jobs.payload ELSE EXCLUDED.payload || CASE WHEN jobs.payload ? 'rebuild' "
                      // A build a person retried keeps its order to build from
                      // scratch, failed again or not: the worker heeds it only
                      // while the cache holds a failure.
                      "    THEN jsonb_build_object('rebuild', true) ELSE '{}'::jsonb END END, "
                      // Never below the attempts a queued or running job has made.
                      "  max_attempts = CASE WHEN " RETRY_CONDITION " THEN EXCLUDED.max_attempts "
                      "    WHEN jobs.state IN ('done', 'skipped') THEN jobs.max_attempts "
                      "    ELSE GREATEST(EXCLUDED.max_attempts, jobs.attempts) END, "
                // clang-format on
                // A job this sweep runs (again) is this sweep's: `jobs cancel --sweep` reaches it.
                "  sweep_id = CASE WHEN jobs.state IN ('done', 'skipped') AND NOT " RETRY_CONDITION
                "    THEN jobs.sweep_id ELSE COALESCE(EXCLUDED.sweep_id, jobs.sweep_id) END "
                "RETURNING id",
                project, j.kind, j.key, j.payload_json, j.priority, dep, j.max_attempts, sweep_id, kCancelledPrefix)[0]
              .as<Id>();
      tx.exec_params("INSERT INTO job_projects (job_id, project) VALUES ($1, $2) ON CONFLICT DO NOTHING", id, project);
      ids.push_back(id);
    }
    tx.commit();
    return ids;
  });
}
#undef RETRY_CONDITION
#undef CANCELLED_IN_THIS_SWEEP

std::optional<Job> claim_job(Database& db, const std::string& project, const std::string& owner,
                             const std::vector<std::string>& kinds, int lease_seconds) {
  std::string kind_list;
  for (const auto& k : kinds) kind_list += (kind_list.empty() ? "" : ",") + k;
  return db.impl().guarded("claiming a job", [&]() -> std::optional<Job> {
    for (;;) {
      pqxx::work tx(db.impl().conn);
      auto r = tx.exec_params(
          "SELECT j.id, j.kind, j.payload::text, j.attempts, j.max_attempts, COALESCE(j.depends_on, 0), "
          "  array_to_string(j.failed_hosts, ','), j.machine_failures, j.timeouts "
          "FROM jobs j "
          // A job is shared by the projects that planned the same work: its
          // row names the first one, and any of them may take it.
          "WHERE ($1 = '' OR " OF_PROJECT("j", "$1") ") "
          "  AND ($2 = '' OR j.kind = ANY (string_to_array($2, ','))) "
          // A queued job's lease_expires_at is when its retry may start (backoff).
          "  AND ((j.state = 'queued' AND (j.lease_expires_at IS NULL OR j.lease_expires_at <= now())) "
          "       OR (j.state = 'running' AND j.lease_expires_at < now())) "
          "  AND (j.depends_on IS NULL OR EXISTS (SELECT 1 FROM jobs d WHERE d.id = j.depends_on "
          "       AND d.state IN ('done', 'failed', 'skipped'))) "
          // A machine on which the job failed leaves it to the others while
          // one of them is at work on the job's project (it takes the job
          // when it finishes), and for a grace after the retry may start (an
          // idle one takes it then); with no such machine about, it tries
          // again itself. A machine busy with another project's jobs would
          // never take it, and the job would wait for as long as that one is busy.
          "  AND NOT (split_part($3, ':', 1) = ANY (j.failed_hosts) AND ("
          "       COALESCE(j.lease_expires_at, '-infinity') > now() - make_interval(secs => $4) "
          "       OR EXISTS (SELECT 1 FROM jobs o WHERE o.state = 'running' AND o.lease_expires_at > now() "
          "       AND o.project = j.project "
          "       AND split_part(o.lease_owner, ':', 1) <> ALL (j.failed_hosts)))) "
          "ORDER BY j.priority DESC, j.id LIMIT 1 FOR UPDATE OF j SKIP LOCKED",
          project, kind_list, owner, kFailedHostGraceSeconds);
      if (r.empty()) return std::nullopt;
      Job job;
      job.id = r[0][0].as<Id>();
      job.kind = r[0][1].as<std::string>();
      job.payload_json = r[0][2].as<std::string>();
      job.attempts = r[0][3].as<int>() + 1;
      job.max_attempts = r[0][4].as<int>();
      if (auto dep = r[0][5].as<Id>(); dep != 0) job.depends_on = dep;
      if (auto hosts = r[0][6].as<std::string>(); !hosts.empty()) job.failed_hosts = common::split(hosts, ',');
      job.machine_failures = r[0][7].as<int>();
      job.timeouts = r[0][8].as<int>();
      if (job.attempts > job.max_attempts) {
        // Its workers kept dying (or kept losing the lease): stop handing it out.
        tx.exec_params(
            "UPDATE jobs SET state = 'failed', lease_owner = NULL, finished_at = now(), updated_at = now(), "
            "error = 'gave up after ' || attempts || ' attempts (the worker died or lost its lease each time)' "
            "WHERE id = $1",
            job.id);
        tx.commit();
        continue;
      }
      tx.exec_params(
          "UPDATE jobs SET state = 'running', attempts = attempts + 1, lease_owner = $2, "
          "lease_expires_at = now() + make_interval(secs => $3), started_at = now(), updated_at = now() "
          "WHERE id = $1",
          job.id, owner, lease_seconds);
      tx.commit();
      return job;
    }
  });
}

bool other_jobs_running_on_host(Database& db, const std::string& owner) {
  return db.impl().guarded("looking for other jobs on this machine", [&] {
    pqxx::read_transaction tx(db.impl().conn);
    return tx
        .exec_params1(
            "SELECT EXISTS (SELECT 1 FROM jobs WHERE state = 'running' AND lease_expires_at > now() "
            "AND split_part(lease_owner, ':', 1) = split_part($1, ':', 1) AND lease_owner <> $1)",
            owner)[0]
        .as<bool>();
  });
}

bool renew_lease(Database& db, Id job_id, const std::string& owner, int lease_seconds) {
  return db.impl().guarded("renewing a lease", [&] {
    pqxx::work tx(db.impl().conn);
    auto r = tx.exec_params(
        "UPDATE jobs SET lease_expires_at = now() + make_interval(secs => $3), updated_at = now() "
        "WHERE id = $1 AND lease_owner = $2 AND state = 'running'",
        job_id, owner, lease_seconds);
    tx.commit();
    return r.affected_rows() == 1;
  });
}

namespace detail {

void finish_job_in(pqxx::work& tx, const JobFinish& f, const std::string& state, const std::string& error) {
  auto r = tx.exec_params(
      "UPDATE jobs SET state = $3, result = $4::jsonb, error = NULLIF($5, ''), lease_owner = NULL, "
      "lease_expires_at = NULL, finished_at = now(), updated_at = now() "
      "WHERE id = $1 AND lease_owner = $2 AND state = 'running'",
      f.job_id, f.owner, state, f.result_json, common::valid_utf8(error));
  // Throwing rolls back the transaction, and with it the results stored in it.
  if (r.affected_rows() != 1)
    throw LeaseLost("job " + std::to_string(f.job_id) + " is no longer " + f.owner +
                    "'s (its lease expired and another worker took it, or it was cancelled); its result is dropped");
}

void check_lease_in(pqxx::work& tx, const JobFinish& f) {
  // FOR SHARE: no other worker can claim the job until this transaction ends.
  auto r = tx.exec_params("SELECT 1 FROM jobs WHERE id = $1 AND lease_owner = $2 AND state = 'running' FOR SHARE",
                          f.job_id, f.owner);
  if (r.empty())
    throw LeaseLost("job " + std::to_string(f.job_id) + " is no longer " + f.owner +
                    "'s (its lease expired and another worker took it, or it was cancelled); its evaluation is left alone");
}

}  // namespace detail

void finish_job(Database& db, const JobFinish& f, const std::string& state, const std::string& error) {
  db.impl().guarded("finishing a job", [&] {
    pqxx::work tx(db.impl().conn);
    detail::finish_job_in(tx, f, state, error);
    tx.commit();
  });
}

void retry_job_later(Database& db, Id job_id, const std::string& owner, const std::string& error,
                     double backoff_seconds, bool machine_only, bool timed_out) {
  db.impl().guarded("putting a job back in the queue", [&] {
    pqxx::work tx(db.impl().conn);
    auto r = tx.exec_params(
        "UPDATE jobs SET state = 'queued', error = $3, lease_owner = NULL, "
        "machine_failures = machine_failures + CASE WHEN $5 THEN 1 ELSE 0 END, "
        "timeouts = CASE WHEN $6 THEN timeouts + 1 ELSE 0 END, "
        "lease_expires_at = now() + make_interval(secs => $4), updated_at = now(), "
        "failed_hosts = CASE WHEN split_part($2, ':', 1) = ANY (failed_hosts) THEN failed_hosts "
        "  ELSE array_append(failed_hosts, split_part($2, ':', 1)) END "
        "WHERE id = $1 AND lease_owner = $2 AND state = 'running'",
        job_id, owner, common::valid_utf8(error), backoff_seconds, machine_only, timed_out);
    if (r.affected_rows() != 1)
      throw LeaseLost("job " + std::to_string(job_id) + " is no longer " + owner + "'s");
    tx.commit();
  });
}

namespace {

/// A text[] literal: {"a","b"}, each element quoted.
std::string text_array(const std::vector<std::string>& items) {
  std::string out = "{";
  for (const auto& item : items) {
    out += out.size() > 1 ? ",\"" : "\"";
    for (char c : item) out += (c == '"' || c == '\\') ? std::string{'\\', c} : std::string{c};
    out += '"';
  }
  return out + "}";
}

}  // namespace

// What a sweep plans today ($2..$7 of a RequeueFilter): a job of another
// recipe, policy, checkout, suite or toolchain would be refused by its
// worker, fail, and fail the sweep.
#define PLANNED_TODAY                                                                     \
  "AND ($2 = '' OR COALESCE(payload->>'recipe_hash', $2) = $2) "                          \
  "AND ($3 = '' OR kind <> 'eval' OR COALESCE(payload->>'policy_hash', $3) = $3) "        \
  "AND ($4 = '' OR COALESCE(payload->>'repo', $4) = $4) "                                 \
  "AND (cardinality($5::text[]) = 0 OR kind <> 'eval' OR payload->>'suite_hash' IS NULL " \
  "     OR payload->>'suite_hash' = ANY($5::text[])) "                                    \
  "AND (NOT $6 OR payload->>'toolchain' IS NULL OR payload->>'toolchain' = ANY($7::text[]))"

// Queued, or held by a worker whose lease ran out (a farm that died with
// its sweep), and of no live sweep: another project's runs (and counts, and
// cancels) its own. Live: running, and its project's sweep lock held (a
// killed sweep's row says running until its project sweeps again). The
// lock's keys as pg_try_advisory_lock(int4, int4) stores them.
#define WAITING                                                                                            \
  "(state = 'queued' OR (state = 'running' AND lease_expires_at < now())) "                                \
  "AND NOT EXISTS (SELECT 1 FROM sweeps s WHERE s.id = jobs.sweep_id AND s.state = 'running' AND EXISTS (" \
  "  SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 "             \
  "  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) "                   \
  "  AND l.classid::bigint = (hashtext('driftwatch sweep')::bigint & 4294967295) "                         \
  "  AND l.objid::bigint = (hashtext(s.project)::bigint & 4294967295))) "

std::vector<Id> waiting_jobs(Database& db, const std::string& project, const RequeueFilter& f,
                             std::optional<Id> adopt_into) {
  return db.impl().guarded(adopt_into ? "adopting waiting jobs" : "reading waiting jobs", [&] {
    pqxx::work tx(db.impl().conn);
    std::vector<Id> ids;
    // clang-format off
    auto rows = adopt_into
        ? tx.exec_params("UPDATE jobs SET sweep_id = $8, updated_at = now() WHERE " OF_PROJECT("jobs", "$1") " AND " WAITING PLANNED_TODAY
                         " RETURNING id",
                         project, f.recipe_hash, f.policy_hash, f.repo, text_array(f.suite_hashes),
                         f.toolchains.has_value(), text_array(f.toolchains.value_or(std::vector<std::string>{})),
                         *adopt_into)
        : tx.exec_params("SELECT id FROM jobs WHERE " OF_PROJECT("jobs", "$1") " AND " WAITING PLANNED_TODAY,
                         project, f.recipe_hash, f.policy_hash, f.repo, text_array(f.suite_hashes),
                         f.toolchains.has_value(), text_array(f.toolchains.value_or(std::vector<std::string>{})));
    // clang-format on
    for (const auto& row : rows) ids.push_back(row[0].as<Id>());
    tx.commit();
    std::sort(ids.begin(), ids.end());
    return ids;
  });
}

#undef WAITING

std::vector<Id> requeue_failed_jobs(Database& db, const std::string& project, const RequeueFilter& f) {
  return db.impl().guarded("requeueing failed jobs", [&] {
    pqxx::work tx(db.impl().conn);
    // What the sweep plans tonight: a job of another recipe, policy, checkout,
    // suite or toolchain would be refused by its worker, fail, and fail the
    // sweep. Skipped evaluations whose build is tried again are held to it too.
    const char* planned = PLANNED_TODAY " RETURNING id";
    std::vector<Id> ids;
    // A build given a compiler since goes first: its evaluations follow it.
    for (const char* which : {"(state = 'failed' OR " LOST_EVALUATION ") ", BUILT_SINCE " ", BUILD_TRIED_AGAIN " "})
      for (const auto& row :
           tx.exec_params(std::string("UPDATE jobs SET " QUEUED_AFRESH
                                      ", updated_at = now() WHERE " OF_PROJECT("jobs", "$1") " AND ") +
                              which + planned,
                          project, f.recipe_hash, f.policy_hash, f.repo, text_array(f.suite_hashes),
                          f.toolchains.has_value(), text_array(f.toolchains.value_or(std::vector<std::string>{}))))
        ids.push_back(row[0].as<Id>());
    tx.commit();
    return ids;
  });
}

#undef LOST_EVALUATION
#undef BUILD_TRIED_AGAIN
#undef BUILT_SINCE
#undef PLANNED_TODAY

int requeue_jobs_of(Database& db, const std::string& owner, bool give_back_attempt, int* given_back) {
  return db.impl().guarded("requeueing jobs", [&] {
    pqxx::work tx(db.impl().conn);
    auto r = tx.exec_params(
        // Given back, a lost connection never makes the next claim the job's
        // last attempt, where a timeout becomes the check-in's result; but
        // only so many times (a connection cut on every run).
        "UPDATE jobs SET state = 'queued', "
        "attempts = CASE WHEN $2 AND given_back < $3 THEN GREATEST(attempts - 1, 0) ELSE attempts END, "
        "given_back = given_back + CASE WHEN $2 THEN 1 ELSE 0 END, "
        "lease_owner = NULL, lease_expires_at = NULL, updated_at = now() "
        // RETURNING reads the row as updated: given_back one more than the
        // SET's test saw, so "<= $3" is its "< $3".
        "WHERE state = 'running' AND lease_owner = $1 RETURNING $2 AND given_back <= $3",
        owner, give_back_attempt, kMaxGiveBacks);
    tx.commit();
    if (given_back)
      *given_back = static_cast<int>(
          std::count_if(r.begin(), r.end(), [](const auto& row) { return row[0].template as<bool>(); }));
    return static_cast<int>(r.affected_rows());
  });
}

std::vector<std::string> running_job_owners(Database& db, const std::string& project) {
  return db.impl().guarded("reading job owners", [&] {
    pqxx::read_transaction tx(db.impl().conn);
    std::vector<std::string> out;
    for (const auto& row : tx.exec_params(
             "SELECT DISTINCT lease_owner FROM jobs WHERE state = 'running' AND " OF_PROJECT("jobs", "$1")
             " AND lease_owner IS NOT NULL",
             project))
      out.push_back(row[0].as<std::string>());
    return out;
  });
}

std::optional<JobState> job_state(Database& db, Id job_id) {
  return db.impl().guarded("reading a job", [&]() -> std::optional<JobState> {
    pqxx::read_transaction tx(db.impl().conn);
    auto r = tx.exec_params(
        "SELECT kind, state, COALESCE(result::text, '{}'), COALESCE(error, ''), attempts FROM jobs WHERE id = $1",
        job_id);
    if (r.empty()) return std::nullopt;
    return JobState{job_id, r[0][0].as<std::string>(), r[0][1].as<std::string>(), r[0][2].as<std::string>(),
                    r[0][3].as<std::string>(), r[0][4].as<int>()};
  });
}

bool job_of_project(Database& db, Id job_id, const std::string& project) {
  return db.impl().guarded("reading a job", [&] {
    pqxx::read_transaction tx(db.impl().conn);
    return !tx.exec_params("SELECT 1 FROM jobs WHERE id = $1 AND " OF_PROJECT("jobs", "$2"), job_id, project).empty();
  });
}

void adopt_jobs(Database& db, Id sweep_id, const std::vector<Id>& ids) {
  if (ids.empty()) return;
  std::string list;
  for (auto id : ids) list += (list.empty() ? "" : ",") + std::to_string(id);
  db.impl().guarded("adopting jobs", [&] {
    pqxx::work tx(db.impl().conn);
    tx.exec_params(
        // Also one a remote worker finished meanwhile: it ran for this sweep.
        "UPDATE jobs SET sweep_id = $1 WHERE id = ANY (string_to_array($2, ',')::bigint[])", sweep_id, list);
    tx.commit();
  });
}

std::vector<UnfinishedEvaluation> unfinished_evaluations(Database& db, const std::string& project,
                                                         const std::string& recipe_hash, const std::string& policy_hash,
                                                         const std::string& suite_hash, const std::string& repo) {
  return db.impl().guarded("reading evaluation jobs", [&] {
    pqxx::read_transaction tx(db.impl().conn);
    std::vector<UnfinishedEvaluation> out;
    // clang-format off
    for (const auto& r : tx.exec_params(
             "SELECT j.id, j.payload->>'sha', j.state, COALESCE(j.error, ''), COALESCE(b.id, 0), "
             "  COALESCE(b.state, ''), COALESCE(b.error, ''), COALESCE(b.result->>'outcome', ''), "
             "  CASE WHEN j.state = 'running' AND j.lease_expires_at < now() THEN COALESCE(j.lease_owner, '?') ELSE '' END, "
             "  CASE WHEN b.state = 'running' AND b.lease_expires_at < now() THEN COALESCE(b.lease_owner, '?') ELSE '' END "
             "FROM jobs j LEFT JOIN jobs b ON b.id = j.depends_on "
             "WHERE j.kind = 'eval' AND j.state <> 'done' AND " OF_PROJECT("j", "$1") " "
             "  AND j.payload->>'recipe_hash' = $2 AND j.payload->>'policy_hash' = $3 "
             "  AND j.payload->>'suite_hash' = $4 AND j.payload ? 'sha' "
             "  AND (j.payload->>'repo' = $5 OR j.payload ? 'toolchain') "
             "ORDER BY j.id",
             project, recipe_hash, policy_hash, suite_hash, repo))
      // clang-format on
      out.push_back({r[0].as<Id>(), r[1].as<std::string>(), r[2].as<std::string>(), r[3].as<std::string>(),
                     r[4].as<Id>(), r[5].as<std::string>(), r[6].as<std::string>(), r[7].as<std::string>(),
                     r[8].as<std::string>(), r[9].as<std::string>()});
    return out;
  });
}

namespace {

/// Rows of (state, count) as JobCounts.
JobCounts tally(const pqxx::result& rows) {
  JobCounts c;
  for (const auto& row : rows) {
    auto state = row[0].as<std::string>();
    int n = row[1].as<int>();
    if (state == kJobQueued) c.queued = n;
    else if (state == kJobRunning) c.running = n;
    else if (state == kJobDone) c.done = n;
    else if (state == kJobFailed) c.failed = n;
    else if (state == kJobSkipped) c.skipped = n;
    if (row.size() > 2) c.given_back += row[2].as<int>();
    if (row.size() > 3) c.cancelled += row[3].as<int>();
  }
  return c;
}

}  // namespace

bool jobs_finished(Database& db, const std::vector<std::string>& keys) {
  if (keys.empty()) return true;
  return db.impl().guarded("looking up jobs", [&] {
    pqxx::read_transaction tx(db.impl().conn);
    std::set<std::string> wanted(keys.begin(), keys.end());
    std::size_t finished = 0;
    for (const auto& k : wanted)
      finished += tx.exec_params1("SELECT count(*) FROM jobs WHERE key = $1 AND state IN ('done', 'skipped')", k)[0]
                      .as<int>();
    return finished == wanted.size();
  });
}

std::map<std::string, JobStateAndOutcome> job_states(Database& db, const std::vector<std::string>& keys) {
  return db.impl().guarded("looking up jobs", [&] {
    pqxx::read_transaction tx(db.impl().conn);
    std::map<std::string, JobStateAndOutcome> out;
    for (const auto& r : tx.exec_params("SELECT key, state, COALESCE(result->>'outcome', '') FROM jobs "
                                        "WHERE key = ANY ($1::text[])",
                                        text_array(keys)))
      out.emplace(r[0].as<std::string>(), JobStateAndOutcome{r[1].as<std::string>(), r[2].as<std::string>()});
    return out;
  });
}

JobCounts count_jobs(Database& db, const std::vector<Id>& job_ids) {
  std::string ids;
  for (auto id : job_ids) ids += (ids.empty() ? "" : ",") + std::to_string(id);
  return db.impl().guarded("counting jobs", [&] {
    pqxx::read_transaction tx(db.impl().conn);
    // A running job whose lease expired has no live worker: it waits to be
    // taken over, so it counts as queued (a sweep's stall watch must not
    // take a dead worker's job for progress).
    return tally(tx.exec_params(
        "SELECT CASE WHEN state = 'running' AND lease_expires_at < now() THEN 'queued' ELSE state END, count(*), "
        "  COALESCE(sum(given_back), 0)::int "
        "FROM jobs WHERE id = ANY (string_to_array($1, ',')::bigint[]) GROUP BY 1",
        ids));
  });
}

namespace {

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

}  // namespace

std::vector<JobRow> list_jobs(Database& db, const JobFilter& f) {
  return db.impl().guarded("listing jobs", [&] {
    pqxx::read_transaction tx(db.impl().conn);
    std::vector<JobRow> out;
    for (const auto& row : tx.exec_params(
             "SELECT id, project, kind, state, payload::text, COALESCE(lease_owner, ''), COALESCE(error, ''), "
             "  attempts, max_attempts, priority, COALESCE(depends_on, 0), COALESCE(sweep_id, 0), "
             "  CASE WHEN state = 'running' THEN extract(epoch FROM now() - started_at)::float8 ELSE 0 END, "
             "  extract(epoch FROM lease_expires_at - now())::float8, "
             "  COALESCE(to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), ''), "
             "  COALESCE(to_char(finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), ''), "
             "  COALESCE(result::text, '') "
             "FROM jobs "
             // The query as it reads:
             // clang-format off
             "WHERE ($1 = '' OR " OF_PROJECT("jobs", "$1") ") AND ($2 = '' OR state = ANY (string_to_array($2, ','))) "
             "  AND ($3 = 0 OR sweep_id = $3) "
             // Failed before queued: a long queue must not push them out of a limited list.
             "ORDER BY CASE state WHEN 'running' THEN 0 WHEN 'failed' THEN 1 WHEN 'queued' THEN 2 ELSE 3 END, "
             "  CASE WHEN state IN ('running', 'queued') THEN -priority ELSE 0 END, "
             "  CASE WHEN state IN ('running', 'queued') THEN id ELSE -id END "
             "LIMIT NULLIF($4, 0)",
             // clang-format on
             f.project, joined(f.states), f.sweep_id.value_or(0), f.limit)) {
      JobRow j;
      j.id = row[0].as<Id>();
      j.project = row[1].as<std::string>();
      j.kind = row[2].as<std::string>();
      j.state = row[3].as<std::string>();
      j.payload_json = row[4].as<std::string>();
      j.owner = row[5].as<std::string>();
      j.error = row[6].as<std::string>();
      j.attempts = row[7].as<int>();
      j.max_attempts = row[8].as<int>();
      j.priority = row[9].as<int>();
      if (auto d = row[10].as<Id>(); d != 0) j.depends_on = d;
      if (auto s = row[11].as<Id>(); s != 0) j.sweep_id = s;
      j.running_seconds = row[12].as<double>();
      if (!row[13].is_null()) j.lease_left_seconds = row[13].as<double>();
      j.started_at = row[14].as<std::string>();
      j.finished_at = row[15].as<std::string>();
      j.result_json = row[16].as<std::string>();
      out.push_back(std::move(j));
    }
    return out;
  });
}

JobCounts count_project_jobs(Database& db, const std::string& project, Id sweep_id) {
  return db.impl().guarded("counting jobs", [&] {
    pqxx::read_transaction tx(db.impl().conn);
    return tally(tx.exec_params(
        "SELECT state, count(*), 0, count(*) FILTER (WHERE state = 'failed' AND starts_with(COALESCE(error, ''), $3)) "
        "FROM jobs WHERE ($1 = '' OR " OF_PROJECT("jobs", "$1") ") AND ($2 = 0 OR sweep_id = $2) GROUP BY state",
        project, sweep_id, kCancelledPrefix));
  });
}

common::Result<std::vector<Id>> retry_job_now(Database& db, Id job_id) {
  return db.impl().guarded("retrying a job", [&]() -> common::Result<std::vector<Id>> {
    pqxx::work tx(db.impl().conn);
    // An evaluation skipped because its build did not finish: retried
    // alone, it was claimed at once and skipped again. Its build is tried
    // again with it where that is retryable; a check-in recorded as not
    // building has nothing to evaluate, and is said so.
    std::vector<Id> ids;
    auto dep = tx.exec_params(
        "SELECT b.id, b.state, COALESCE(b.result->>'outcome', ''), "
        "  b.state = 'failed' OR (b.state = 'done' AND " RETRYABLE_BUILD("b") ") "
        "FROM jobs e JOIN jobs b ON b.id = e.depends_on WHERE e.id = $1 AND e.state = 'skipped'",
        job_id);
    if (!dep.empty()) {
      auto build = dep[0][0].as<Id>();
      auto outcome = dep[0][2].as<std::string>();
      if (dep[0][3].as<bool>()) {
        tx.exec_params("UPDATE jobs SET " QUEUED_AFRESH
                       ", lease_owner = NULL, lease_expires_at = NULL, "
                       "finished_at = NULL, updated_at = now(), payload = " REBUILT_PAYLOAD("jobs") " WHERE id = $1",
                       build);
        ids.push_back(build);
        // Its other evaluations skipped with this one, as `jobs retry <build>` does.
        for (const auto& row :
             tx.exec_params("UPDATE jobs SET " QUEUED_AFRESH ", finished_at = NULL, updated_at = now() "
                            "WHERE depends_on = $1 AND state = 'skipped' AND id <> $2 RETURNING id",
                            build, job_id))
          ids.push_back(row[0].as<Id>());
      } else if (dep[0][1].as<std::string>() == "done" && !outcome.empty() && outcome != "ok") {
        return common::Error{"job " + std::to_string(job_id) + " was skipped because its build (job " +
                             std::to_string(build) + ") recorded the check-in as " + outcome +
                             ": there is no compiler to evaluate"};
      }
    }
    auto r = tx.exec_params(
        "UPDATE jobs SET " QUEUED_AFRESH ", lease_owner = NULL, "
        "lease_expires_at = NULL, finished_at = NULL, updated_at = now(), payload = " REBUILT_PAYLOAD("jobs") " "
        "WHERE id = $1 AND (state IN ('failed', 'skipped') "
        // A build recorded as the check-in's (it timed out, failed without a
        // word, or failed to build) is done, and the next sweep leaves it;
        // but people may know the machine failed it, and try it again.
        "  OR (state = 'done' AND kind = 'build' AND " RETRYABLE_BUILD("jobs") ")) RETURNING id",
        job_id);
    if (r.empty()) {
      auto s = tx.exec_params("SELECT state FROM jobs WHERE id = $1", job_id);
      if (s.empty()) return common::Error{"no job " + std::to_string(job_id)};
      return common::Error{"job " + std::to_string(job_id) + " is " + s[0][0].as<std::string>() +
                           "; only failed or skipped jobs, and builds that gave no compiler, are retried"};
    }
    ids.insert(ids.begin(), job_id);
    for (const auto& row : tx.exec_params(
             "UPDATE jobs SET " QUEUED_AFRESH ", finished_at = NULL, "
             "updated_at = now() "
             "WHERE depends_on = $1 AND state = 'skipped' RETURNING id",
             job_id))
      ids.push_back(row[0].as<Id>());
    tx.commit();
    return ids;
  });
}

std::vector<Id> cancel_jobs(Database& db, const JobFilter& f, const std::optional<Id>& job_id,
                            const std::string& reason, int* were_running) {
  auto states = f.states.empty() ? std::vector<std::string>{kJobQueued, kJobRunning} : f.states;
  return db.impl().guarded("cancelling jobs", [&] {
    pqxx::work tx(db.impl().conn);
    std::vector<Id> ids;
    int running = 0;
    // Whether each was held before (RETURNING gives the new row): only a
    // running job whose lease is live has a worker to stop, not a dead one's.
    // clang-format off
    for (const auto& row : tx.exec_params(
             "WITH old AS (SELECT id, state = 'running' AND lease_expires_at > now() AS held FROM jobs "
             "  WHERE state IN ('queued', 'running') AND state = ANY (string_to_array($4, ',')) "
             "    AND ($1 = 0 OR id = $1) AND ($2 = '' OR " OF_PROJECT("jobs", "$2") ") AND ($3 = 0 OR sweep_id = $3) "
             "  FOR UPDATE) "
             "UPDATE jobs SET state = 'failed', error = $5, lease_owner = NULL, lease_expires_at = NULL, "
             "finished_at = now(), updated_at = now() FROM old WHERE jobs.id = old.id "
             "RETURNING jobs.id, old.held",
             job_id.value_or(0), f.project, f.sweep_id.value_or(0), joined(states), common::valid_utf8(reason))) {
      // clang-format on
      ids.push_back(row[0].as<Id>());
      running += row[1].as<bool>();
    }
    tx.commit();
    std::sort(ids.begin(), ids.end());
    if (were_running) *were_running = running;
    return ids;
  });
}

#undef OF_PROJECT

}  // namespace db
