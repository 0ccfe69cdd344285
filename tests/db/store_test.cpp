#include <doctest/doctest.h>

#include <chrono>
#include <functional>
#include <thread>

#include "db/drift.h"
#include "db/embedded.h"
#include "db/jobs.h"
#include "db/store.h"
#include "evaluator/evaluation.h"
#include "tests/support/test_db.h"

namespace {

struct Evaluation {
  db::Id id, repo = 0;
  std::vector<db::Id> benchmarks;
  db::Id build = 0, policy = 0, suite = 0;
};

Evaluation make_evaluation(db::Database& database, int modules) {
  auto repo = db::upsert_repository(database, "/srv/compiler");
  auto commit = db::upsert_commit(database, repo, {"abc123", {"p1"}, "Ada <a@b>", 1700000000, "Initial"});
  auto recipe = db::upsert_recipe(database, "sample", "h1", "body");
  auto build = db::record_build(database, {commit, recipe, "ok", 1.5, "/cache/x", "/logs/x", "tail"});
  auto policy = db::upsert_policy(database, "p", "ph", "abc123", R"({"seed": 1})");
  std::vector<db::BenchmarkRow> rows;
  for (int i = 0; i < modules; ++i) rows.push_back({"m" + std::to_string(i), "hash", "c"});
  Evaluation e;
  auto suite = db::upsert_suite(database, "smoke", "mh", "{}", rows, &e.benchmarks);
  e.id = db::begin_evaluation(database, build, policy, suite);
  e.build = build, e.policy = policy, e.suite = suite, e.repo = repo;
  return e;
}

std::vector<db::MeasurementRow> rows_for(const Evaluation& e) {
  std::vector<db::MeasurementRow> rows;
  for (auto b : e.benchmarks)
    for (const char* h : {"default", "learned"}) rows.push_back({b, h, "text_bytes", 1234.0});
  return rows;
}

/// Records interrupted evaluations, polling until one is: the server notices
/// closed connections promptly, not instantly. 0 after five seconds.
int record_interrupted_once_noticed(db::Database& observer) {
  int marked = 0;
  for (int i = 0; i < 100 && marked == 0; ++i) {
    marked = db::record_interrupted_evaluations(observer);
    if (!marked) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return marked;
}

}  // namespace

TEST_CASE("upserts return the same id for the same key") {
  auto database = testing::fresh_database();
  auto r1 = db::upsert_repository(database, "/srv/a");
  CHECK(db::upsert_repository(database, "/srv/a") == r1);
  CHECK(db::upsert_repository(database, "/srv/b") != r1);
  auto c1 = db::upsert_commit(database, r1, {"sha1", {}, "x", 0, "s"});
  CHECK(db::upsert_commit(database, r1, {"sha1", {}, "x", 0, "s"}) == c1);
}

namespace {
/// A root for upsert_repository that counts how often it was asked.
std::function<std::string()> counted_root(int& walks, std::string root) {
  return [&walks, root] {
    ++walks;
    return root;
  };
}
}  // namespace

TEST_CASE("a repository read at a new path with the same root is the same repository, its series kept") {
  auto database = testing::fresh_database();
  int walks = 0;
  auto e = make_evaluation(database, 2);  // recorded at /srv/compiler with no root asked, as before roots were
  db::store_evaluation(database, {e.id, {}, rows_for(e), "{}", "{}"});
  // Recorded there again: the path is known, and its root is learned once.
  CHECK(db::upsert_repository(database, "/srv/compiler", counted_root(walks, "r00t")) == e.repo);
  CHECK(db::upsert_repository(database, "/srv/compiler", counted_root(walks, "r00t")) == e.repo);
  CHECK(walks == 1);
  // Moved: before anything records the new path, a reader finds it by its root;
  auto moved = db::find_repository(database, "/home/moved/compiler", counted_root(walks, "r00t"));
  CHECK(moved == e.repo);
  CHECK(walks == 2);
  // a writer records the new path, which needs no walk after that.
  CHECK(db::upsert_repository(database, "/home/moved/compiler", counted_root(walks, "r00t")) == e.repo);
  CHECK(db::upsert_repository(database, "/home/moved/compiler", counted_root(walks, "r00t")) == e.repo);
  CHECK(db::find_repository(database, "/home/moved/compiler", counted_root(walks, "r00t")) == e.repo);
  CHECK(walks == 3);
  REQUIRE(moved.has_value());
  auto series = db::load_series(database, *moved, "h1", "ph", "mh");
  REQUIRE(series.size() == 1);
  CHECK(series[0].sha == "abc123");
  CHECK(series[0].evaluated);
  // Another history, and a path with no root to go by (a shallow clone), are
  // other repositories; the latter is asked once too.
  auto other = db::upsert_repository(database, "/srv/other", counted_root(walks, "another-root"));
  CHECK(other != e.repo);
  CHECK(db::load_series(database, other, "h1", "ph", "mh").empty());
  auto shallow = db::upsert_repository(database, "/srv/shallow", counted_root(walks, ""));
  CHECK(shallow != e.repo);
  CHECK(shallow != other);
  CHECK(db::upsert_repository(database, "/srv/shallow", counted_root(walks, "")) == shallow);
  CHECK(walks == 5);
  // Only reading, a path never recorded is found by its root or not at all.
  CHECK_FALSE(db::find_repository(database, "/srv/never-read", counted_root(walks, "unknown")).has_value());
  CHECK_FALSE(db::find_repository(database, "/srv/never-read").has_value());
}

TEST_CASE("two paths of one history recorded before roots stay two repositories, a third path joins the first") {
  auto database = testing::fresh_database();
  int walks = 0;
  auto a = db::upsert_repository(database, "/srv/a");  // no root asked, as before roots were
  auto b = db::upsert_repository(database, "/srv/b");
  REQUIRE(a != b);
  CHECK(db::upsert_repository(database, "/srv/a", counted_root(walks, "r")) == a);  // learns r
  // r is a's already: b keeps its path alone (no unique violation), asked once.
  CHECK(db::upsert_repository(database, "/srv/b", counted_root(walks, "r")) == b);
  CHECK(db::upsert_repository(database, "/srv/b", counted_root(walks, "r")) == b);
  CHECK(walks == 2);
  CHECK(db::upsert_repository(database, "/srv/c", counted_root(walks, "r")) == a);
}

TEST_CASE("a build is recorded once per (commit, recipe) and can be found") {
  auto database = testing::fresh_database();
  auto repo = db::upsert_repository(database, "/srv/a");
  auto commit = db::upsert_commit(database, repo, {"sha1", {}, "x", 0, "s"});
  auto recipe = db::upsert_recipe(database, "r", "hash", "body");
  CHECK_FALSE(db::find_build(database, commit, recipe).has_value());
  auto first = db::record_build(database, {commit, recipe, "build-failed", 2, "", "/l", "error: x"});
  auto second = db::record_build(database, {commit, recipe, "ok", 3, "/a", "/l", ""});
  CHECK(first == second);
  auto found = db::find_build(database, commit, recipe);
  REQUIRE(found.has_value());
  CHECK(found->outcome == "ok");
  CHECK(found->artifact_dir == "/a");
}

TEST_CASE("an ok build is not turned into a broken check-in by another machine's failed rebuild") {
  auto database = testing::fresh_database();
  auto repo = db::upsert_repository(database, "/srv/a");
  auto commit = db::upsert_commit(database, repo, {"sha1", {}, "x", 0, "s"});
  auto recipe = db::upsert_recipe(database, "r", "hash", "body");
  auto ok = db::record_build(database, {commit, recipe, "ok", 3, "/a", "/l", ""});
  CHECK(db::record_build(database, {commit, recipe, "missing-artifact", 4, "", "/l2", "no bin/dwcc"}) == ok);
  auto found = db::find_build(database, commit, recipe);
  REQUIRE(found.has_value());
  CHECK(found->outcome == "ok");
  CHECK(found->artifact_dir == "/a");
  CHECK(found->log_tail == "");
  db::record_build(database, {commit, recipe, "ok", 5, "/b", "/l3", ""});  // a rebuild that works replaces it
  CHECK(db::find_build(database, commit, recipe)->artifact_dir == "/b");
}

TEST_CASE("measurements go in with COPY and re-storing replaces, never duplicates") {
  auto database = testing::fresh_database();
  auto e = make_evaluation(database, 50);
  auto rows = rows_for(e);
  db::replace_measurements(database, e.id, rows);
  CHECK(db::count_measurements(database, e.id) == 100);
  db::replace_measurements(database, e.id, rows);
  CHECK(db::count_measurements(database, e.id) == 100);
  db::replace_measurements_row_by_row(database, e.id, rows);
  CHECK(db::count_measurements(database, e.id) == 100);
}

TEST_CASE("a bad measurement fails the whole COPY and keeps the previous rows") {
  auto database = testing::fresh_database();
  auto e = make_evaluation(database, 3);
  db::replace_measurements(database, e.id, rows_for(e));
  auto bad = rows_for(e);
  bad.push_back({e.benchmarks[0], "nonsense-heuristic", "text_bytes", 1});
  CHECK_THROWS_WITH_AS(db::replace_measurements(database, e.id, bad), doctest::Contains("storing measurements"),
                       common::Fatal);
  CHECK(db::count_measurements(database, e.id) == 6);
}

TEST_CASE("module_results stores every outcome of the evaluator's table, and only those") {
  auto database = testing::fresh_database();
  auto e = make_evaluation(database, static_cast<int>(std::size(evaluator::kOutcomes)));
  db::EvaluationRecord r;
  r.evaluation_id = e.id;
  for (std::size_t i = 0; i < std::size(evaluator::kOutcomes); ++i)
    r.results.push_back({e.benchmarks[i], "learned", evaluator::kOutcomes[i], "why"});
  db::store_evaluation(database, r);
  CHECK(db::count_module_results(database, e.id) == static_cast<std::int64_t>(std::size(evaluator::kOutcomes)));
  r.results.push_back({e.benchmarks[0], "default", "exploded", ""});
  CHECK_THROWS_AS(db::store_evaluation(database, r), common::Fatal);
}

TEST_CASE("a compiler's message in another encoding than UTF-8 is stored, not the reason the evaluation is lost") {
  auto database = testing::fresh_database();
  auto e = make_evaluation(database, 1);
  db::EvaluationRecord r;
  r.evaluation_id = e.id;
  // A Latin-1 path in a diagnostic: PostgreSQL refuses the byte 0xe9 in UTF-8 text.
  r.results.push_back({e.benchmarks[0], "learned", evaluator::kOutcomeCrashed, "error: caf\xe9.c: boom"});
  r.measurements = rows_for(e);
  db::store_evaluation(database, r);
  CHECK(db::evaluation_status(database, e.id) == "done");
  CHECK(db::count_module_results(database, e.id) == 1);
  auto elsewhere = testing::fresh_database();
  auto failed = make_evaluation(elsewhere, 1);
  db::fail_evaluation(elsewhere, failed.id, "LLVM ERROR: cannot open caf\xe9.o");
  CHECK(db::evaluation_status(elsewhere, failed.id) == "failed");
}

TEST_CASE("the series counts as the policy's losses the learned compiles it can have failed, not the machine's") {
  auto database = testing::fresh_database();
  auto e = make_evaluation(database, 5);
  db::EvaluationRecord r;
  r.evaluation_id = e.id;
  const std::pair<const char*, const char*> learned[] = {
      {evaluator::kOutcomeCrashed, "compiler exited 1: LLVM ERROR: broken"},                   // the policy's
      {evaluator::kOutcomeTimeout, "compiler timed out"},                                      // the policy's
      {evaluator::kOutcomeInternalError, "compiler exited 1: No space left on device"},        // the machine's
      {evaluator::kOutcomeBadObject, "truncated"},                                             // the machine's
      {evaluator::kOutcomeCrashed, "compiler killed by signal 9 (SIGKILL): the OOM killer"}};  // the policy's too
  for (std::size_t i = 0; i < e.benchmarks.size(); ++i) {
    r.results.push_back({e.benchmarks[i], "default", evaluator::kOutcomeOk, ""});
    r.results.push_back({e.benchmarks[i], "learned", learned[i].first, learned[i].second});
  }
  db::store_evaluation(database, r);
  auto series = db::load_series(database, e.repo, "h1", "ph", "mh");
  REQUIRE(series.size() == 1);
  CHECK(series[0].learned_failed() == 3);
  CHECK(series[0].learned_unsure.empty());  // without a machine rule, nothing is

  // Under drift's rule a timeout or a kill not seen again alone may be the
  // machine's: unsure, neither failing nor compiling (one module opens an
  // alert, so a loaded night must not). A hang found again alone is the policy's.
  db::MachineFailureRule rule{"timeout,channel-error,object-unreadable,internal-error",
                              evaluator::kOutcomeCrashed,
                              {"killed by signal 9 "},
                              evaluator::kFailedAgainAloneNote};
  auto judged = db::load_series(database, e.repo, "h1", "ph", "mh", &rule);
  REQUIRE(judged.size() == 1);
  CHECK(judged[0].learned_failing == std::vector<std::string>{"m0"});
  CHECK(judged[0].learned_unsure == std::vector<std::string>{"m1", "m4"});
  auto again = testing::fresh_database();
  auto h = make_evaluation(again, 1);
  db::EvaluationRecord hung;
  hung.evaluation_id = h.id;
  hung.results = {{h.benchmarks[0], "default", evaluator::kOutcomeOk, ""},
                  {h.benchmarks[0], "learned", evaluator::kOutcomeTimeout,
                   std::string(evaluator::kFailedAgainAloneNote) + ": compiler timed out"}};
  db::store_evaluation(again, hung);
  auto told = db::load_series(again, h.repo, "h1", "ph", "mh", &rule);
  REQUIRE(told.size() == 1);
  CHECK(told[0].learned_failing == std::vector<std::string>{"m0"});
  CHECK(told[0].learned_unsure.empty());
}

TEST_CASE("an evaluation that failed as a whole is marked failed, not left running") {
  auto database = testing::fresh_database();
  auto e = make_evaluation(database, 1);
  CHECK(db::evaluation_status(database, e.id) == "running");
  db::fail_evaluation(database, e.id, "the compiler never consulted the policy: check the ML flags");
  CHECK(db::evaluation_status(database, e.id) == "failed");
}

TEST_CASE("a worker whose lease another worker took neither restarts nor fails the evaluation that one stored") {
  auto database = testing::fresh_database();
  auto sweep = db::begin_sweep(database, "p");
  db::enqueue_jobs(database, "p", sweep, {{"eval", "e1", "{}", 0, -1, 3}});
  auto job = db::claim_job(database, "p", "w1:1:0", {}, 60);
  REQUIRE(job);
  // w1 stalls past its lease (a paused VM); w2 takes the job and stores the evaluation.
  CHECK(db::renew_lease(database, job->id, "w1:1:0", -5));
  auto taken = db::claim_job(database, "p", "w2:1:0", {}, 60);
  REQUIRE(taken);
  REQUIRE(taken->id == job->id);
  auto e = make_evaluation(database, 1);
  db::store_evaluation(database, {e.id, {}, rows_for(e), "{}", "{}"});
  REQUIRE(db::evaluation_status(database, e.id) == "done");

  db::JobFinish w1{job->id, "w1:1:0", "{}"};
  CHECK_THROWS_AS(db::begin_evaluation(database, e.build, e.policy, e.suite, &w1), db::LeaseLost);
  CHECK(db::evaluation_status(database, e.id) == "done");
  CHECK_THROWS_AS(db::fail_evaluation(database, e.id, "every module timed out", &w1), db::LeaseLost);
  CHECK(db::evaluation_status(database, e.id) == "done");
  // Without a job (driftwatch eval), failing a row another run stored leaves it stored.
  db::fail_evaluation(database, e.id, "every module timed out");
  CHECK(db::evaluation_status(database, e.id) == "done");
  db::JobFinish w2{job->id, "w2:1:0", "{}"};
  CHECK(db::begin_evaluation(database, e.build, e.policy, e.suite, &w2) == e.id);
  CHECK(db::evaluation_status(database, e.id) == "done");  // stored figures stay until new ones replace them
}

TEST_CASE("measuring a stored evaluation again and giving up keeps it done, with its figures") {
  auto database = testing::fresh_database();
  auto e = make_evaluation(database, 2);
  db::EvaluationRecord r;
  r.evaluation_id = e.id;
  for (auto b : e.benchmarks) r.results.push_back({b, "default", evaluator::kOutcomeOk, ""});
  r.measurements = rows_for(e);
  db::store_evaluation(database, r);
  auto measured = db::count_measurements(database, e.id);
  REQUIRE(measured > 0);
  // `driftwatch eval --no-reuse` again, cut short (SIGTERM, a lost database) or failed.
  REQUIRE(db::begin_evaluation(database, e.build, e.policy, e.suite) == e.id);
  db::interrupt_evaluation(database, e.id);
  CHECK(db::evaluation_status(database, e.id) == "done");
  REQUIRE(db::begin_evaluation(database, e.build, e.policy, e.suite) == e.id);
  db::fail_evaluation(database, e.id, "every module timed out");
  CHECK(db::evaluation_status(database, e.id) == "done");
  CHECK(db::count_measurements(database, e.id) == measured);
  CHECK(db::count_module_results(database, e.id) == 2);
  CHECK(db::load_series(database, e.repo, "h1", "ph", "mh").size() == 1);
}

TEST_CASE("a worker giving an evaluation up leaves it running while the worker that took the job over runs it") {
  std::string name;
  auto observer = testing::fresh_database(true, &name);
  auto target = db::EmbeddedCluster(testing::test_cluster_dir() + "/postgres").target(name);
  auto stalled = db::Database::connect(target).take();
  auto e = make_evaluation(stalled, 1);
  auto taker = db::Database::connect(target).take();
  REQUIRE(db::begin_evaluation(taker, e.build, e.policy, e.suite) == e.id);  // the same row, held by both
  db::interrupt_evaluation(stalled, e.id);  // its attempt failed (a lost lease, an exception)
  CHECK(db::evaluation_status(observer, e.id) == "running");
  db::interrupt_evaluation(taker, e.id);  // nobody else holds it now
  CHECK(db::evaluation_status(observer, e.id) == "interrupted");
}

TEST_CASE("an evaluation whose store was refused (a lost lease) is let go, so it can be found interrupted") {
  std::string name;
  auto observer = testing::fresh_database(true, &name);
  auto target = db::EmbeddedCluster(testing::test_cluster_dir() + "/postgres").target(name);
  auto sweep = db::begin_sweep(observer, "p");
  db::enqueue_jobs(observer, "p", sweep, {{"eval", "e1", "{}", 0, -1, 3}});
  auto job = db::claim_job(observer, "p", "w1:1:0", {}, 60);
  REQUIRE(job);
  auto worker = db::Database::connect(target).take();  // lives on after the refusal, as a worker does
  auto e = make_evaluation(worker, 1);
  db::JobFilter project;
  project.project = "p";
  db::cancel_jobs(observer, project, job->id, "cancelled by a person");
  db::JobFinish w1{job->id, "w1:1:0", "{}"};
  CHECK_THROWS_AS(db::store_evaluation(worker, {e.id, {}, rows_for(e), "{}", "{}"}, &w1), db::LeaseLost);
  CHECK(db::evaluation_status(observer, e.id) == "running");
  CHECK(db::record_interrupted_evaluations(observer) == 1);
  CHECK(db::evaluation_status(observer, e.id) == "interrupted");
}

TEST_CASE("an evaluation held in another database of the same cluster does not hold this one's") {
  std::string name;
  auto observer = testing::fresh_database(true, &name);
  auto target = db::EmbeddedCluster(testing::test_cluster_dir() + "/postgres").target(name);
  std::string other_name;
  auto other = testing::fresh_database(true, &other_name);
  db::Id id = 0;
  {
    auto runner = db::Database::connect(target).take();
    id = make_evaluation(runner, 1).id;
  }  // its process died
  // Another project's evaluation with the same id, running and held.
  REQUIRE(make_evaluation(other, 1).id == id);
  int marked = record_interrupted_once_noticed(observer);
  CHECK(marked == 1);
  CHECK(db::evaluation_status(observer, id) == "interrupted");
  CHECK(db::record_interrupted_evaluations(other) == 0);
  CHECK(db::evaluation_status(other, id) == "running");
}

TEST_CASE("a running evaluation is interrupted once no connection holds it: its process died") {
  std::string name;
  auto observer = testing::fresh_database(true, &name);
  auto target = db::EmbeddedCluster(testing::test_cluster_dir() + "/postgres").target(name);
  db::Id id = 0;
  {
    auto runner = db::Database::connect(target).take();
    id = make_evaluation(runner, 1).id;
    // Held by the connection running it: another one leaves it running.
    CHECK(db::record_interrupted_evaluations(observer) == 0);
    CHECK(db::evaluation_status(observer, id) == "running");
    // Running it again on a second connection (an identical evaluation) holds it too.
    auto twin = db::Database::connect(target).take();
    CHECK(make_evaluation(twin, 1).id == id);
  }  // both connections close, as when their processes die
  int marked = record_interrupted_once_noticed(observer);
  CHECK(marked == 1);
  CHECK(db::evaluation_status(observer, id) == "interrupted");
  auto counts = db::count_evaluations(observer);
  CHECK(counts.interrupted == 1);
  CHECK(counts.running == 0);
}

// (A stored one stays done when run again and given up: "measuring a stored
// evaluation again and giving up keeps it done, with its figures".)
TEST_CASE("a failed evaluation run again by a process that dies stays failed, with its reason: the check-in's result") {
  std::string name;
  auto observer = testing::fresh_database(true, &name);
  auto target = db::EmbeddedCluster(testing::test_cluster_dir() + "/postgres").target(name);
  auto runner = db::Database::connect(target).take();
  auto e = make_evaluation(runner, 1);
  db::fail_evaluation(runner, e.id, "the compiler never consulted the policy");
  // Run again (a retrain's look at this build, an `eval`) on another
  // connection that dies: it was reset to running, then found interrupted,
  // and the check-in left the series (its policy-unusable evidence with it).
  {
    auto rerun = db::Database::connect(target).take();
    CHECK(make_evaluation(rerun, 1).id == e.id);
    CHECK(db::evaluation_status(observer, e.id) == "failed");
  }
  CHECK(record_interrupted_once_noticed(observer) == 0);
  CHECK(db::evaluation_status(observer, e.id) == "failed");
  auto series = db::load_series(observer, e.repo, "h1", "ph", "mh");
  REQUIRE(series.size() == 1);
  CHECK(series[0].evaluation_error == "the compiler never consulted the policy");
  // A re-run that fails too gives its own reason; one that stores, its figures.
  auto again = db::Database::connect(target).take();
  CHECK(make_evaluation(again, 1).id == e.id);
  db::fail_evaluation(again, e.id, "the compiler compiles no module even without the policy");
  CHECK(db::load_series(observer, e.repo, "h1", "ph", "mh")[0].evaluation_error ==
        "the compiler compiles no module even without the policy");
  CHECK(make_evaluation(again, 1).id == e.id);
  db::store_evaluation(again, {e.id, {}, rows_for(e), "{}", "{}"});
  CHECK(db::evaluation_status(observer, e.id) == "done");
}

TEST_CASE("a done evaluation job whose failed evaluation is run again by a process that dies stays done, not lost") {
  std::string name;
  auto observer = testing::fresh_database(true, &name);
  auto target = db::EmbeddedCluster(testing::test_cluster_dir() + "/postgres").target(name);
  auto sweep = db::begin_sweep(observer, "p");
  std::vector<db::JobSpec> plan = {{"eval", "e1", "{}", 0, -1, 3}};
  auto ids = db::enqueue_jobs(observer, "p", sweep, plan);
  auto job = db::claim_job(observer, "p", "w:1:0", {}, 60);
  REQUIRE(job);
  db::Id id = 0;
  {
    auto runner = db::Database::connect(target).take();
    id = make_evaluation(runner, 1).id;
    db::finish_job(observer, {job->id, "w:1:0", "{\"evaluation_id\": " + std::to_string(id) + "}"}, db::kJobDone);
    // Stored failed (the check-in's result): the job stays done when planned again.
    db::fail_evaluation(runner, id, "the compiler never consulted the policy");
    db::enqueue_jobs(observer, "p", sweep, plan);
    CHECK(db::job_state(observer, ids[0])->state == "done");
    make_evaluation(runner, 1);  // run again (a retrain at this build) by a process that dies
  }
  // It was found interrupted, and the check-in's result was gone with it.
  CHECK(record_interrupted_once_noticed(observer) == 0);
  CHECK(db::evaluation_status(observer, id) == "failed");
  // Nothing to measure again: a nightly --new leaves the job done.
  CHECK(db::requeue_failed_jobs(observer, "p").empty());
  CHECK(db::job_state(observer, ids[0])->state == "done");
}
