// The job queue's rules against real PostgreSQL: a retry waits for its backoff
// in the database's clock, a result whose lease was taken is refused (its
// transaction rolls back), people retry and cancel.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <chrono>
#include <thread>

#include "common/process.h"
#include "common/text.h"
#include "db/jobs.h"
#include "tests/support/test_db.h"

namespace {

std::vector<db::Id> plan(db::Database& d) {
  auto sweep = db::begin_sweep(d, "p");
  return db::enqueue_jobs(d, "p", sweep, {{"build", "b1", "{\"sha\": \"aaa\"}", 0, -1, 2}, {"eval", "e1", "{}", 0, 0, 3}});
}

}  // namespace

TEST_CASE("a failed attempt waits for its backoff, and the last one fails the job with its reason") {
  auto d = testing::fresh_database();
  auto ids = plan(d);
  auto job = db::claim_job(d, "p", "w:1:0", {}, 60);
  REQUIRE(job);
  CHECK(job->id == ids[0]);
  CHECK_FALSE(db::claim_job(d, "p", "w:1:0", {}, 60));  // the evaluation waits for its build
  db::retry_job_later(d, job->id, "w:1:0", "attempt 1 of 2: boom", 3600);
  CHECK_FALSE(db::claim_job(d, "p", "w:2:0", {}, 60));  // not before an hour of the database's clock
  auto rows = db::list_jobs(d, {"p", {db::kJobQueued}, std::nullopt, 10});
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].error == "attempt 1 of 2: boom");
  CHECK(*rows[0].lease_left_seconds > 3500);
  CHECK_THROWS_AS(db::retry_job_later(d, ids[1], "w:1:0", "x", 0), db::LeaseLost);
}

TEST_CASE("a job handed back after its worker lost the database spends no attempt (a few times), one whose worker died does") {
  auto d = testing::fresh_database();
  auto ids = plan(d);  // the build has 2 attempts
  for (int i = 0; i < 3; ++i) {
    auto job = db::claim_job(d, "p", "w:1:0", {}, 60);
    REQUIRE(job);
    CHECK(job->id == ids[0]);
    CHECK(job->attempts == 1);
    int given_back = -1;
    CHECK(db::requeue_jobs_of(d, "w:1:0", true, &given_back) == 1);
    CHECK(given_back == 1);
  }
  CHECK(db::job_state(d, ids[0])->state == "queued");
  CHECK(db::job_state(d, ids[0])->attempts == 0);
  // Counted for those who wait on the jobs (a Slurm array stopped mid-job
  // finished nothing, yet did not fail to run).
  CHECK(db::count_jobs(d, ids).given_back == 3);
  CHECK(db::count_jobs(d, {ids[1]}).given_back == 0);
  // A connection lost on every run (a server's idle timeout shorter than the
  // job) is the job's lot: past kMaxGiveBacks the attempts count again, and
  // the job ends failed rather than running for ever.
  for (int i = 3; i < db::kMaxGiveBacks + 1; ++i) {
    REQUIRE(db::claim_job(d, "p", "w:1:0", {}, 60));
    CHECK(db::requeue_jobs_of(d, "w:1:0", true) == 1);
  }
  CHECK(db::job_state(d, ids[0])->attempts == 1);
  REQUIRE(db::claim_job(d, "p", "w:1:0", {}, 60));
  int given_back = -1;  // what a stopped worker's line says: this attempt counted
  CHECK(db::requeue_jobs_of(d, "w:1:0", true, &given_back) == 1);
  CHECK(given_back == 0);
  CHECK(db::job_state(d, ids[0])->attempts == 2);
  CHECK_FALSE(db::claim_job(d, "p", "w:1:0", {"build"}, 60));
  CHECK(db::job_state(d, ids[0])->state == "failed");
  // Taken back by a person (or the next sweep), it starts afresh.
  db::retry_job_now(d, ids[0]).take();
  // A worker that died may have died of the job: its claims count, and the
  // job is given up after its attempts rather than run for ever.
  for (int i = 0; i < 2; ++i) {
    REQUIRE(db::claim_job(d, "p", "w:1:0", {}, 60));
    CHECK(db::requeue_jobs_of(d, "w:1:0", false) == 1);
  }
  CHECK(db::job_state(d, ids[0])->attempts == 2);
  CHECK_FALSE(db::claim_job(d, "p", "w:1:0", {"build"}, 60));
  CHECK(db::job_state(d, ids[0])->state == "failed");
  db::retry_job_now(d, ids[0]).take();
  // A lease that expired is another matter: the worker may have died of the job.
  auto held = db::claim_job(d, "p", "w:1:0", {}, 0);
  REQUIRE(held);
  auto taken = db::claim_job(d, "p", "w:2:0", {}, 60);
  REQUIRE(taken);
  CHECK(taken->attempts == 2);
}

TEST_CASE("a worker whose lease was taken has its result refused, and people retry and cancel jobs") {
  auto d = testing::fresh_database();
  auto ids = plan(d);
  auto job = db::claim_job(d, "p", "w:1:0", {}, 1);
  REQUIRE(job);
  auto cancelled = db::cancel_jobs(d, {}, job->id, "cancelled by ops");
  CHECK(cancelled == std::vector<db::Id>{job->id});
  CHECK_THROWS_AS(db::finish_job(d, {job->id, "w:1:0", "{}"}, db::kJobDone), db::LeaseLost);
  CHECK(db::job_state(d, job->id)->state == "failed");
  CHECK(db::job_state(d, job->id)->error == "cancelled by ops");
  auto again = db::retry_job_now(d, job->id).take();
  CHECK(again == std::vector<db::Id>{job->id});
  CHECK(db::job_state(d, job->id)->state == "queued");
  CHECK_FALSE(db::retry_job_now(d, job->id));
  CHECK(db::retry_job_now(d, 999999).error().message == "no job 999999");
  auto all = db::cancel_jobs(d, {"p", {db::kJobQueued}, std::nullopt, 100}, std::nullopt, "cancelled by ops");
  CHECK(all.size() == 2);
  CHECK(db::count_project_jobs(d, "p").failed == 2);
}

TEST_CASE("cancelling counts the running jobs whose worker is there to stop: not queued ones, nor a dead worker's") {
  auto d = testing::fresh_database();
  auto sweep = db::begin_sweep(d, "p");
  auto ids = db::enqueue_jobs(d, "p", sweep,
                              {{"build", "b1", "{\"sha\": \"aaa\"}", 0, -1, 2},
                               {"build", "b2", "{\"sha\": \"bbb\"}", 0, -1, 2},
                               {"build", "b3", "{\"sha\": \"ccc\"}", 0, -1, 2}});
  auto live = db::claim_job(d, "p", "w:1:0", {}, 600);
  auto dead = db::claim_job(d, "p", "w:2:0", {}, 600);
  REQUIRE(live);
  REQUIRE(dead);
  REQUIRE(db::renew_lease(d, dead->id, "w:2:0", -5));  // its lease ran out: nobody renews it
  int running = -1;
  auto cancelled = db::cancel_jobs(d, {"p", {}, std::nullopt, 100}, std::nullopt, "cancelled by ops", &running);
  CHECK(cancelled.size() == ids.size());
  CHECK(running == 1);
}

TEST_CASE(
    "retrying an evaluation skipped for want of a build retries that build too, from scratch where it was recorded "
    "as not building") {
  auto d = testing::fresh_database();
  plan(d);
  // The plan's first build fails for good, and its evaluation is skipped.
  auto build = db::claim_job(d, "p", "w:1:0", {"build"}, 1);
  REQUIRE(build);
  db::finish_job(d, {build->id, "w:1:0", "{}"}, db::kJobFailed, "the machine failed every attempt");
  auto eval = db::claim_job(d, "p", "w:1:0", {"eval"}, 1);
  REQUIRE(eval);
  REQUIRE(db::job_state(d, eval->id)->state == "running");
  db::finish_job(d, {eval->id, "w:1:0", "{}"}, db::kJobSkipped);
  auto again = db::retry_job_now(d, eval->id).take();
  CHECK(again == std::vector<db::Id>{eval->id, build->id});
  CHECK(db::job_state(d, build->id)->state == "queued");
  CHECK(db::job_state(d, eval->id)->state == "queued");
  // A build recorded as the check-in's failure (a linker the machine killed
  // on every try looks the same): built again, from scratch, not from the
  // cached failure; its evaluation with it.
  auto b2 = db::claim_job(d, "p", "w:1:0", {"build"}, 1);
  REQUIRE(b2);
  db::finish_job(d, {b2->id, "w:1:0", R"({"outcome": "build-failed"})"}, db::kJobDone);
  auto e2 = db::claim_job(d, "p", "w:1:0", {"eval"}, 1);
  REQUIRE(e2);
  db::finish_job(d, {e2->id, "w:1:0", "{}"}, db::kJobSkipped);
  auto retried = db::retry_job_now(d, e2->id).take();
  CHECK(retried == std::vector<db::Id>{e2->id, b2->id});
  CHECK(db::job_state(d, b2->id)->state == "queued");
  CHECK(db::job_state(d, e2->id)->state == "queued");
  auto rebuilt = db::claim_job(d, "p", "w:1:0", {"build"}, 1);
  REQUIRE(rebuilt);
  CHECK(rebuilt->id == b2->id);
  CHECK(rebuilt->payload_json.find("\"rebuild\": true") != std::string::npos);
}

TEST_CASE("a build job two projects share is taken by either project's workers for its evaluations") {
  auto d = testing::fresh_database();
  auto first = plan(d);
  // Another project tracks another policy on the same compiler: the same build key.
  auto sweep = db::begin_sweep(d, "q");
  auto second = db::enqueue_jobs(d, "q", sweep, {{"build", "b1", "{\"sha\": \"aaa\"}", 0, -1, 2}, {"eval", "e2", "{}", 0, 0, 3}});
  CHECK(second[0] == first[0]);
  auto job = db::claim_job(d, "q", "w:1:0", {}, 60);
  REQUIRE(job);
  CHECK(job->id == first[0]);
  db::finish_job(d, {job->id, "w:1:0", "{}"}, db::kJobDone);
  auto eval = db::claim_job(d, "q", "w:1:0", {}, 60);
  REQUIRE(eval);
  CHECK(eval->id == second[1]);
  CHECK_FALSE(db::claim_job(d, "q", "w:1:0", {}, 60));  // p's own evaluation (another policy) is p's workers' to take
  CHECK(db::claim_job(d, "p", "w:2:0", {}, 60)->id == first[1]);
}

TEST_CASE("an evaluation skipped for a shared build that failed is taken back once the other project's sweep rebuilt it") {
  auto d = testing::fresh_database();
  auto first = plan(d);
  auto sweep = db::begin_sweep(d, "q");
  auto second = db::enqueue_jobs(d, "q", sweep, {{"build", "b1", "{\"sha\": \"aaa\"}", 0, -1, 2}, {"eval", "e2", "{}", 0, 0, 3}});
  REQUIRE(second[0] == first[0]);
  // The shared build fails: both projects' evaluations are skipped.
  auto build = db::claim_job(d, "p", "w:1:0", {}, 60);
  REQUIRE(build);
  db::finish_job(d, {build->id, "w:1:0", "{}"}, db::kJobFailed, "boom");
  for (auto project : {"p", "q"}) {
    auto eval = db::claim_job(d, project, "w:1:0", {}, 60);
    REQUIRE(eval);
    db::finish_job(d, {eval->id, "w:1:0", "{\"skipped\": \"its build job failed\"}"}, db::kJobSkipped);
  }
  // p's next sweep takes back the build and p's evaluation, and builds it.
  CHECK(db::requeue_failed_jobs(d, "p") == std::vector<db::Id>{first[0], first[1]});
  build = db::claim_job(d, "p", "w:1:0", {"build"}, 60);
  REQUIRE(build);
  db::finish_job(d, {build->id, "w:1:0", "{\"build_id\": 1, \"outcome\": \"ok\"}"}, db::kJobDone);
  // q's evaluation of that check-in was left skipped for good: q's next
  // sweep (or its plan of the same job) takes it back now that a compiler is there.
  CHECK(db::requeue_failed_jobs(d, "q") == std::vector<db::Id>{second[1]});
  CHECK(db::job_state(d, second[1])->state == "queued");
  auto taken_back = db::claim_job(d, "q", "w:1:0", {}, 60);
  REQUIRE(taken_back);
  CHECK(taken_back->id == second[1]);
  db::finish_job(d, {taken_back->id, "w:1:0", "{}"}, db::kJobDone);
  // A build that was done and failed to build leaves its evaluation skipped.
  auto third = db::enqueue_jobs(d, "q", sweep, {{"build", "b2", "{}", 0, -1, 2}, {"eval", "e3", "{}", 0, 0, 3}});
  auto broken = db::claim_job(d, "q", "w:1:0", {"build"}, 60);
  REQUIRE(broken);
  REQUIRE(broken->id == third[0]);
  db::finish_job(d, {broken->id, "w:1:0", "{\"build_id\": 2, \"outcome\": \"build-failed\"}"}, db::kJobDone);
  auto skipped = db::claim_job(d, "q", "w:1:0", {"eval"}, 60);
  REQUIRE(skipped);
  db::finish_job(d, {skipped->id, "w:1:0", "{}"}, db::kJobSkipped);
  CHECK(db::requeue_failed_jobs(d, "q").empty());
  CHECK(db::enqueue_jobs(d, "q", sweep, {{"build", "b2", "{}", 0, -1, 2}, {"eval", "e3", "{}", 0, 0, 3}}) == third);
  CHECK(db::job_state(d, third[1])->state == "skipped");
}

TEST_CASE("work two projects planned alike is one job that either project's workers run and list") {
  auto d = testing::fresh_database();
  auto first = plan(d);  // p's sweep planned it, and was killed before a worker of p took anything
  // q tracks the same policy on the same compiler and suite: the same keys, the same rows.
  auto sweep = db::begin_sweep(d, "q");
  auto second = db::enqueue_jobs(d, "q", sweep, {{"build", "b1", "{\"sha\": \"aaa\"}", 0, -1, 2}, {"eval", "e1", "{}", 0, 0, 3}});
  CHECK(second == first);
  // Before job_projects, q's workers could take the build but never the
  // evaluation, and q's sweep waited on it for ever.
  auto build = db::claim_job(d, "q", "w:1:0", {}, 60);
  REQUIRE(build);
  CHECK(build->id == first[0]);
  db::finish_job(d, {build->id, "w:1:0", "{}"}, db::kJobDone);
  auto eval = db::claim_job(d, "q", "w:1:0", {}, 60);
  REQUIRE(eval);
  CHECK(eval->id == first[1]);
  CHECK(db::list_jobs(d, {"q", {}, std::nullopt, 10}).size() == 2);
  CHECK(db::count_project_jobs(d, "q").running == 1);
  CHECK(db::running_job_owners(d, "q") == std::vector<std::string>{"w:1:0"});
  // A failure of the shared job is q's to requeue too.
  db::finish_job(d, {eval->id, "w:1:0", "{}"}, db::kJobFailed, "boom");
  CHECK(db::requeue_failed_jobs(d, "q") == std::vector<db::Id>{first[1]});
  CHECK(db::list_jobs(d, {"r", {}, std::nullopt, 10}).empty());  // a third project planned none of it
}

TEST_CASE("a limited job list keeps failed jobs ahead of the queue, and a limit of 0 lists every job") {
  auto d = testing::fresh_database();
  auto sweep = db::begin_sweep(d, "p");
  std::vector<db::JobSpec> specs;
  for (int i = 0; i < 5; ++i) specs.push_back({"build", "b" + std::to_string(i), "{}", 0, -1, 1});
  auto ids = db::enqueue_jobs(d, "p", sweep, specs);
  CHECK(db::cancel_jobs(d, {}, ids.back(), "failed by a test").size() == 1);
  auto first = db::list_jobs(d, {"p", {}, std::nullopt, 1});
  REQUIRE(first.size() == 1);
  CHECK(first[0].id == ids.back());  // before the four queued ones
  CHECK(db::list_jobs(d, {"p", {}, std::nullopt, 0}).size() == 5);
}

TEST_CASE("a job a later sweep runs again is that sweep's, so cancelling the sweep reaches it, and a finished one stays its first sweep's") {
  auto d = testing::fresh_database();
  auto first = db::begin_sweep(d, "p");
  auto ids = db::enqueue_jobs(d, "p", first, {{"build", "b1", "{}", 0, -1, 1}, {"build", "b2", "{}", 0, -1, 1}});
  auto job = db::claim_job(d, "p", "w:1:0", {}, 60);
  REQUIRE(job);
  db::finish_job(d, {job->id, "w:1:0", "{}"}, db::kJobDone);  // b1 done; b2 still queued (the sweep was killed)
  auto second = db::begin_sweep(d, "p");
  CHECK(db::enqueue_jobs(d, "p", second, {{"build", "b1", "{}", 0, -1, 1}, {"build", "b2", "{}", 0, -1, 1}}) == ids);
  CHECK(db::cancel_jobs(d, {"", {}, second, 10}, std::nullopt, "cancelled by ops") == std::vector<db::Id>{ids[1]});
  CHECK(db::list_jobs(d, {"", {}, first, 10}).size() == 1);
  CHECK(db::list_jobs(d, {"", {}, first, 10})[0].id == ids[0]);
}

TEST_CASE("a job a person cancelled stays cancelled for the rest of its sweep, and the next sweep takes it back") {
  auto d = testing::fresh_database();
  auto first = db::begin_sweep(d, "p");
  auto ids = db::enqueue_jobs(d, "p", first, {{"eval", "e1", "{}", 0, -1, 3}});
  REQUIRE(db::cancel_jobs(d, {"p", {}, std::nullopt, 0}, ids[0], std::string(db::kCancelledPrefix) + "ops").size() ==
          1);
  // The sweep's bisection plans the same check-in again: the person's word holds.
  db::enqueue_jobs(d, "p", first, {{"eval", "e1", "{}", 0, -1, 3}});
  CHECK(db::job_state(d, ids[0])->state == "failed");
  // A job that failed on its own is tried again by the same sweep's plan, as before.
  auto other = db::enqueue_jobs(d, "p", first, {{"eval", "e2", "{}", 0, -1, 3}});
  REQUIRE(db::cancel_jobs(d, {"p", {}, std::nullopt, 0}, other[0], "failed by a test").size() == 1);
  db::enqueue_jobs(d, "p", first, {{"eval", "e2", "{}", 0, -1, 3}});
  CHECK(db::job_state(d, other[0])->state == "queued");
  auto second = db::begin_sweep(d, "p");
  db::enqueue_jobs(d, "p", second, {{"eval", "e1", "{}", 0, -1, 3}});
  CHECK(db::job_state(d, ids[0])->state == "queued");
}

namespace {

/// Project p's jobs `specs`, planned by one sweep and all failed (cancelled).
std::vector<db::Id> all_failed(db::Database& d, const std::vector<db::JobSpec>& specs) {
  auto ids = db::enqueue_jobs(d, "p", db::begin_sweep(d, "p"), specs);
  REQUIRE(db::cancel_jobs(d, {"p", {}, std::nullopt, 0}, std::nullopt, "failed by a test").size() == specs.size());
  return ids;
}

}  // namespace

TEST_CASE("a sweep takes back failed jobs planned under its recipe, policy and path, not those of an earlier one") {
  auto d = testing::fresh_database();
  auto ids = all_failed(
      d, {{"build", "b-old", "{\"recipe_hash\": \"r1\", \"repo\": \"/new\"}", 0, -1, 1},
       {"build", "b-new", "{\"recipe_hash\": \"r2\", \"repo\": \"/new\"}", 0, -1, 1},
       {"eval", "e-old", "{\"recipe_hash\": \"r2\", \"policy_hash\": \"p1\", \"repo\": \"/new\"}", 0, -1, 1},
       {"build", "b-moved", "{\"recipe_hash\": \"r2\", \"repo\": \"/old\"}", 0, -1, 1},
       {"eval", "e-rebuilt", "{\"recipe_hash\": \"r2\", \"policy_hash\": \"p2\", \"suite_hash\": \"s1\"}", 0, -1, 1},
       {"eval", "e-now", "{\"recipe_hash\": \"r2\", \"policy_hash\": \"p2\", \"suite_hash\": \"s2\"}", 0, -1, 1}});
  // The recipe is now r2, the policy p2, the checkout at /new and the suite
  // rebuilt as s2: only the build planned under r2 at /new and the
  // evaluation of s2 are worth another try (/old and s1 are gone).
  CHECK(db::requeue_failed_jobs(d, "p", {"r2", "p2", "/new", {"s2", "s\"3"}, std::nullopt}) == std::vector<db::Id>{ids[1], ids[5]});
  CHECK(db::job_state(d, ids[0])->state == "failed");
  CHECK(db::job_state(d, ids[2])->state == "failed");
  CHECK(db::job_state(d, ids[3])->state == "failed");
  CHECK(db::job_state(d, ids[4])->state == "failed");
}

TEST_CASE("a build taken back brings back its skipped evaluations only of the suites and policy the sweep plans") {
  auto d = testing::fresh_database();
  auto ids = db::enqueue_jobs(
      d, "p", db::begin_sweep(d, "p"),
      {{"build", "b1", "{\"recipe_hash\": \"r1\"}", 0, -1, 1},
       {"eval", "e-old-suite", "{\"recipe_hash\": \"r1\", \"policy_hash\": \"p1\", \"suite_hash\": \"s1\"}", 0, 0, 1},
       {"eval", "e-now", "{\"recipe_hash\": \"r1\", \"policy_hash\": \"p1\", \"suite_hash\": \"s2\"}", 0, 0, 1},
       {"eval", "e-old-policy", "{\"recipe_hash\": \"r1\", \"policy_hash\": \"p0\", \"suite_hash\": \"s2\"}", 0, 0,
        1}});
  auto build = db::claim_job(d, "p", "w:1:0", {"build"}, 60);
  REQUIRE(build);
  db::finish_job(d, {build->id, "w:1:0", "{}"}, db::kJobFailed, "the machine failed it");
  for (int i = 0; i < 3; ++i) {
    auto e = db::claim_job(d, "p", "w:1:0", {"eval"}, 60);
    REQUIRE(e);
    db::finish_job(d, {e->id, "w:1:0", "{}"}, db::kJobSkipped);
  }
  // The suite was rebuilt (s2) and the policy is p1: the evaluation of s1
  // and the one of p0 would be refused by their workers, fail, and fail
  // tonight's sweep, which never planned them.
  CHECK(db::requeue_failed_jobs(d, "p", {"r1", "p1", "", {"s2"}, std::nullopt}) == std::vector<db::Id>{ids[0], ids[2]});
  CHECK(db::job_state(d, ids[1])->state == "skipped");
  CHECK(db::job_state(d, ids[3])->state == "skipped");
}

TEST_CASE("a sweep takes back failed toolchain jobs only of toolchains its project still lists") {
  auto d = testing::fresh_database();
  auto ids = all_failed(d, {{"build", "t-kept", "{\"toolchain\": \"/nightly/kept\"}", 0, -1, 1},
                            {"build", "t-gone", "{\"toolchain\": \"/nightly/gone\"}", 0, -1, 1},
                            {"build", "b-repo", "{\"repo\": \"/src\"}", 0, -1, 1}});
  db::RequeueFilter today;
  today.toolchains = std::vector<std::string>{"/nightly/kept"};
  CHECK(db::requeue_failed_jobs(d, "p", today) == std::vector<db::Id>{ids[0], ids[2]});
  CHECK(db::job_state(d, ids[1])->state == "failed");
}

TEST_CASE("a job planned again with fewer attempts keeps those it has made") {
  auto d = testing::fresh_database();
  auto sweep = db::begin_sweep(d, "p");
  auto ids = db::enqueue_jobs(d, "p", sweep, {{"build", "b", "{}", 0, -1, 3}});
  for (const char* worker : {"w1:1:0", "w2:1:0"}) {  // two machines: neither waits out the other's failure
    auto job = db::claim_job(d, "p", worker, {}, 3600);
    REQUIRE(job);
    db::retry_job_later(d, job->id, worker, "a full disk", 0, true);
  }
  REQUIRE(db::enqueue_jobs(d, "p", sweep, {{"build", "b", "{}", 0, -1, 1}}) == ids);
  auto rows = db::list_jobs(d, {"p", {}, std::nullopt, 10});
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].attempts == 2);
  CHECK(rows[0].max_attempts == 2);  // not 1: its next claim would read as a worker that died each time
}

TEST_CASE("a job planned again takes the new plan's payload unless it is done") {
  auto d = testing::fresh_database();
  auto sweep = db::begin_sweep(d, "p");
  auto ids = db::enqueue_jobs(d, "p", sweep,
                              {{"eval", "e-failed", "{\"policy\": \"/home/a/p.policy\"}", 0, -1, 1},
                               {"eval", "e-done", "{\"policy\": \"/home/a/p.policy\"}", 0, -1, 1}});
  CHECK(db::cancel_jobs(d, {"p", {}, std::nullopt, 10}, ids[0], "policy not found").size() == 1);
  auto claimed = db::claim_job(d, "p", "w:1:0", {}, 3600);
  REQUIRE(claimed);
  REQUIRE(claimed->id == ids[1]);
  db::finish_job(d, {ids[1], "w:1:0", "{}"}, db::kJobDone);
  // The policy file moved to the farm's shared mount; the keys are the same.
  auto again = db::enqueue_jobs(d, "p", sweep,
                                {{"eval", "e-failed", "{\"policy\": \"/shared/p.policy\"}", 0, -1, 3},
                                 {"eval", "e-done", "{\"policy\": \"/shared/p.policy\"}", 0, -1, 3}});
  REQUIRE(again == ids);
  auto rows = db::list_jobs(d, {"p", {}, std::nullopt, 10});
  REQUIRE(rows.size() == 2);
  for (const auto& r : rows) {
    INFO(r.id);
    bool failed_one = r.id == ids[0];
    CHECK(r.state == (failed_one ? "queued" : "done"));
    CHECK(r.payload_json.find(failed_one ? "/shared/" : "/home/a/") != std::string::npos);
    CHECK(r.max_attempts == (failed_one ? 3 : 1));
  }
}

TEST_CASE("a running job whose lease expired counts as queued: its worker is gone, it waits to be taken over") {
  auto d = testing::fresh_database();
  auto ids = plan(d);
  auto live = db::claim_job(d, "p", "w:1:0", {}, 3600);
  REQUIRE(live);
  auto counts = db::count_jobs(d, ids);
  CHECK(counts.running == 1);
  CHECK(counts.queued == 1);
  // A lease of 0 s has expired by the next statement, in the database's clock.
  db::retry_job_later(d, live->id, "w:1:0", "attempt 1 of 2: again", 0);
  auto dead = db::claim_job(d, "p", "v:2:0", {}, 0);  // another machine's worker
  REQUIRE(dead);
  counts = db::count_jobs(d, ids);
  CHECK(counts.running == 0);
  CHECK(counts.queued == 2);
  CHECK(counts.finished() == 0);
}

TEST_CASE("a job that failed on one machine is left to another machine at work, and retried where it failed when none is") {
  auto d = testing::fresh_database();
  auto sweep = db::begin_sweep(d, "p");
  auto ids = db::enqueue_jobs(d, "p", sweep, {{"build", "b1", "{}", 1, -1, 3}, {"build", "b2", "{}", 0, -1, 3},
                                              {"build", "b3", "{}", 0, -1, 3}});
  auto first = db::claim_job(d, "p", "bad:1:0", {}, 3600);
  REQUIRE(first);
  CHECK(first->id == ids[0]);
  CHECK(first->failed_hosts.empty());
  auto busy = db::claim_job(d, "p", "good:2:0", {}, 3600);  // the other machine is at work on b2
  REQUIRE(busy);
  CHECK(busy->id == ids[1]);
  db::retry_job_later(d, first->id, "bad:1:0", "attempt 1 of 3: disk full", 0);

  // The bad machine takes the other job, not its own failure again.
  auto next = db::claim_job(d, "p", "bad:1:1", {}, 3600);
  REQUIRE(next);
  CHECK(next->id == ids[2]);
  db::finish_job(d, {next->id, "bad:1:1", "{}"}, db::kJobDone);
  CHECK_FALSE(db::claim_job(d, "p", "bad:1:1", {}, 3600));

  // The good machine, done with b2, takes it and sees where it failed.
  db::finish_job(d, {busy->id, "good:2:0", "{}"}, db::kJobDone);
  auto moved = db::claim_job(d, "p", "good:2:0", {}, 3600);
  REQUIRE(moved);
  CHECK(moved->id == ids[0]);
  CHECK(moved->attempts == 2);
  CHECK(moved->failed_hosts == std::vector<std::string>{"bad"});

  // Failed on both machines, and no other machine at work: either tries
  // again, once the grace in which an idle machine would have taken it is over.
  db::retry_job_later(d, moved->id, "good:2:0", "attempt 2 of 3: disk full", 0);
  CHECK_FALSE(db::claim_job(d, "p", "bad:1:0", {}, 3600));
  std::this_thread::sleep_for(std::chrono::seconds(db::kFailedHostGraceSeconds));
  auto last = db::claim_job(d, "p", "bad:1:0", {}, 3600);
  REQUIRE(last);
  CHECK(last->id == ids[0]);
  CHECK(last->failed_hosts == std::vector<std::string>{"bad", "good"});

  // A sweep that takes the failed job back starts its record afresh.
  db::finish_job(d, {last->id, "bad:1:0", "{}"}, db::kJobFailed, "failed 3 of 3 attempts on bad, good; last: disk full");
  CHECK(db::requeue_failed_jobs(d, "p") == std::vector<db::Id>{ids[0]});
  auto fresh = db::claim_job(d, "p", "bad:1:0", {}, 3600);
  REQUIRE(fresh);
  CHECK(fresh->attempts == 1);
  CHECK(fresh->failed_hosts.empty());
}

TEST_CASE("a job that failed on one machine is not left to a machine busy with another project's jobs") {
  auto d = testing::fresh_database();
  auto p = db::enqueue_jobs(d, "p", db::begin_sweep(d, "p"), {{"build", "b1", "{}", 0, -1, 3}});
  auto q = db::enqueue_jobs(d, "q", db::begin_sweep(d, "q"), {{"build", "other", "{}", 0, -1, 3}});
  auto failed = db::claim_job(d, "p", "bad:1:0", {}, 3600);
  REQUIRE(failed);
  db::retry_job_later(d, failed->id, "bad:1:0", "attempt 1 of 3: disk full", 0);
  // Another machine works on project q around the clock: it never takes p's job.
  auto busy = db::claim_job(d, "q", "elsewhere:2:0", {}, 3600);
  REQUIRE(busy);
  CHECK(busy->id == q[0]);
  std::this_thread::sleep_for(std::chrono::seconds(db::kFailedHostGraceSeconds));
  auto again = db::claim_job(d, "p", "bad:1:0", {}, 3600);
  REQUIRE(again);
  CHECK(again->id == p[0]);
  CHECK(again->failed_hosts == std::vector<std::string>{"bad"});
}

TEST_CASE("a job that failed on one machine goes to an idle machine first, however quickly the failing one asks again") {
  auto d = testing::fresh_database();
  auto ids = db::enqueue_jobs(d, "p", db::begin_sweep(d, "p"), {{"eval", "e1", "{}", 0, -1, 3}});
  auto failed = db::claim_job(d, "p", "full-disk:1:0", {}, 3600);
  REQUIRE(failed);
  db::retry_job_later(d, failed->id, "full-disk:1:0", "attempt 1 of 3: No space left on device", 0);
  // Its retry may start now, and nobody is at work: the failing machine,
  // asking at once, does not get it; an idle machine asking next does.
  CHECK_FALSE(db::claim_job(d, "p", "full-disk:1:0", {}, 3600));
  auto healthy = db::claim_job(d, "p", "healthy:2:0", {}, 3600);
  REQUIRE(healthy);
  CHECK(healthy->id == ids[0]);
  CHECK(healthy->attempts == 2);
}

TEST_CASE("a project's sweep and retrain locks are each held by one connection, and apart from each other") {
  std::string name;
  auto first = testing::fresh_database(true, &name);
  auto dsn = "host=" + testing::test_cluster_dir() + "/postgres user=postgres dbname=" + name;
  auto second = db::Database::connect(db::parse_dsn(dsn).take()).take();
  CHECK(db::try_lock_retrain(first, "p"));
  CHECK_FALSE(db::try_lock_retrain(second, "p"));  // a second retrain of the project waits its turn
  CHECK(db::try_lock_retrain(second, "q"));        // another project's does not
  CHECK(db::try_lock_project(second, "p"));        // nor does a sweep of the same project
  CHECK_FALSE(db::try_lock_project(first, "p"));
}

TEST_CASE("a sweep that lost its connection takes its lock back from its old session, never from another's") {
  std::string name;
  auto held = testing::fresh_database(true, &name);
  auto dsn = "host=" + testing::test_cluster_dir() + "/postgres user=postgres dbname=" + name;
  auto connect = [&] { return db::Database::connect(db::parse_dsn(dsn).take()).take(); };
  // `held` stands for a session whose client went away with the network:
  // the server keeps it, and the project's lock with it.
  REQUIRE(db::try_lock_project(held, "p"));
  auto other = connect();
  REQUIRE(db::try_lock_project(other, "q"));
  auto fresh = connect();
  CHECK_FALSE(db::try_lock_project(fresh, "p"));
  // Another session's pid (one holding another project's lock) is not ended.
  CHECK_FALSE(db::retake_project_lock(fresh, "p", db::session_pid(other)));
  CHECK_FALSE(db::try_lock_project(fresh, "p"));
  CHECK(db::count_jobs(other, {}).total() == 0);  // still connected
  // The lost session's is: the lock comes back.
  CHECK(db::retake_project_lock(fresh, "p", db::session_pid(held)));
  CHECK_THROWS_AS(db::count_jobs(held, {}), db::ConnectionLost);
}

TEST_CASE("a sweep that died running is marked interrupted by the project's next sweep, another project's is not") {
  std::string name;
  auto d = testing::fresh_database(true, &name);
  auto died = db::begin_sweep(d, "p");   // SIGKILLed, or its database went away: never finished
  auto other = db::begin_sweep(d, "q");  // another project's, running now
  CHECK(db::interrupt_dead_sweeps(d, "p") == 1);  // under p's lock: p's running sweep is gone
  auto next = db::begin_sweep(d, "p");
  common::ProcessSpec psql;
  psql.argv = {
      "psql", "-X",
      "-At",  "host=" + testing::test_cluster_dir() + "/postgres user=postgres dbname=" + name,
      "-c",   "SELECT string_agg(id || ' ' || state || ' ' || (finished_at IS NOT NULL), ',' ORDER BY id) FROM sweeps"};
  auto rows = common::trim(common::run_process(psql).take().output);
  CHECK(rows == fmt::format("{} interrupted true,{} running false,{} running false", died, other, next));
}
