// The farm's pure parts: the Slurm batch script and squeue's answer, and the
// queue as `driftwatch jobs` prints it. No Slurm, no database.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "builder/recipe.h"
#include "sweep/job_listing.h"
#include "sweep/slurm.h"
#include "sweep/stall_watch.h"

TEST_CASE("the Slurm batch script runs one worker per array task on the project") {
  sweep::SlurmSpec s;
  s.driftwatch = "/opt/dw bin/driftwatch";
  s.data_dir = "/srv/farm/data";
  s.project = "llvm inline";
  s.partition = "build";
  s.tasks = 8;
  s.jobs = 16;
  s.log_dir = "/srv/farm/data/slurm/llvm";
  auto text = sweep::slurm_batch_script(s);
  CHECK(text.rfind("#!/bin/sh\n", 0) == 0);
  CHECK(text.find("#SBATCH --array=0-7\n") != std::string::npos);
  CHECK(text.find("#SBATCH --cpus-per-task=16\n") != std::string::npos);
  CHECK(text.find("#SBATCH --partition=build\n") != std::string::npos);
  CHECK(text.find("#SBATCH --job-name=driftwatch-llvm_inline\n") != std::string::npos);
  CHECK(text.find("#SBATCH --output=/srv/farm/data/slurm/llvm/worker-%A_%a.out\n") != std::string::npos);
  CHECK(text.find("exec '/opt/dw bin/driftwatch' --data-dir /srv/farm/data worker --project 'llvm inline' -j 16 "
                  "--idle-exit 30 --retry-backoff 10\n") != std::string::npos);
  s.partition = "";
  CHECK(sweep::slurm_batch_script(s).find("--partition") == std::string::npos);
}

TEST_CASE("squeue's tasks are counted by state, with the distinct reasons pending ones wait") {
  auto tasks = sweep::parse_squeue(
      "12_0|RUNNING|None\n12_1|RUNNING|None\n12_2|PENDING|Resources\n12_3|PENDING|ReqNodeNotAvail, UnavailableNodes:n1\n"
      "12_4|PENDING|Resources\n\n");
  CHECK(tasks.states.size() == 2);
  CHECK(tasks.states["RUNNING"] == 2);
  CHECK(tasks.states["PENDING"] == 3);
  CHECK(tasks.pending_reason == "Resources; ReqNodeNotAvail, UnavailableNodes:n1");
  CHECK(sweep::describe_tasks(tasks.states) == "3 pending, 2 running");
  CHECK(sweep::describe_tasks({}) == "none left");
  // Running tasks' "None" is no reason to wait.
  CHECK(sweep::parse_squeue("7_0|RUNNING|None\n").pending_reason.empty());
}

TEST_CASE("a farm stalls only after its limit passes with no job running and none finished") {
  using namespace std::chrono_literals;
  sweep::StallWatch::Clock::time_point t0{1000s};
  sweep::StallWatch w(60s);
  w.restart(t0);
  CHECK_FALSE(w.stalled(t0 + 10s, 0, 0));
  CHECK_FALSE(w.stalled(t0 + 59s, 0, 0));
  CHECK(w.stalled(t0 + 60s, 0, 0));
  // A running job is progress: the clock starts again from there.
  CHECK_FALSE(w.stalled(t0 + 61s, 1, 0));
  CHECK_FALSE(w.stalled(t0 + 120s, 0, 0));
  CHECK(w.stalled(t0 + 121s, 0, 0));
  // So is a finished job, even if it was never seen running.
  CHECK_FALSE(w.stalled(t0 + 200s, 0, 3));
  CHECK(w.stalled(t0 + 260s, 0, 3));
  // A new Slurm array starts its own clock.
  w.restart(t0 + 300s);
  CHECK_FALSE(w.stalled(t0 + 330s, 0, 3));
  // The first look has nothing to compare its count with.
  sweep::StallWatch fresh(60s);
  CHECK_FALSE(fresh.stalled(t0, 0, 5));
  CHECK(fresh.stalled(t0 + 60s, 0, 5));
  // 0: never a stall.
  sweep::StallWatch patient(0s);
  patient.restart(t0);
  CHECK_FALSE(patient.stalled(t0 + 100000s, 0, 0));
}

TEST_CASE("the jobs table says who holds a job and for how long, when a retry comes, and why a job failed") {
  db::JobRow running;
  running.id = 7;
  running.kind = "eval";
  running.state = "running";
  running.payload_json = R"({"sha": "0123456789abcdef0123", "suite": "holdout"})";
  running.owner = "build3:4242:0";
  running.attempts = 1;
  running.max_attempts = 3;
  running.running_seconds = 75;
  running.lease_left_seconds = 100;
  db::JobRow waiting = running;
  waiting.id = 8;
  waiting.state = "queued";
  waiting.owner = "";
  waiting.lease_left_seconds = 20;
  waiting.error = "attempt 1 of 3: build timeout";
  db::JobRow failed = running;
  failed.id = 9;
  failed.kind = "build";
  failed.state = "failed";
  failed.payload_json = R"({"toolchain": "/opt/nightly", "label": "nightly"})";
  failed.error = "failed 3 of 3 attempts; last: boom";
  failed.owner = "";
  db::JobCounts counts{1, 1, 5, 1, 0};  // queued, running, done, failed, skipped
  auto table = sweep::render_jobs_table({running, waiting, failed}, counts, "");
  CHECK(table.find("jobs of every project: 1 queued, 1 running, 5 done, 0 skipped, 1 failed") != std::string::npos);
  // One sweep's counts are headed as that sweep's.
  CHECK(sweep::render_jobs_table({}, counts, "", false, 8).starts_with("jobs of sweep 8: 1 queued"));
  CHECK(sweep::render_jobs_table({}, counts, "p", false, 8).starts_with("jobs of sweep 8 of project p: "));
  CHECK(table.find("eval 0123456789ab holdout") != std::string::npos);
  CHECK(table.find("build3:4242:0 for 1 min 15 s, lease 1 min 40 s left") != std::string::npos);
  CHECK(table.find("retry in 20.0 s: attempt 1 of 3: build timeout") != std::string::npos);
  CHECK(table.find("build nightly (toolchain)") != std::string::npos);
  CHECK(table.find("failed 3 of 3 attempts; last: boom") != std::string::npos);
  running.lease_left_seconds = -12;
  CHECK(sweep::render_jobs_table({running}, counts, "p").find("lease expired 12.0 s ago") != std::string::npos);

  auto j = nlohmann::json::parse(sweep::render_jobs_json({running, failed}, counts));
  CHECK(j["counts"]["done"] == 5);
  CHECK(j["jobs"][0]["owner"] == "build3:4242:0");
  CHECK(j["jobs"][0]["lease_left_seconds"] == -12);
  CHECK(j["jobs"][0]["sha"] == "0123456789abcdef0123");
  CHECK(j["jobs"][1]["owner"].is_null());
  CHECK(j["jobs"][1]["running_seconds"].is_null());
  CHECK(j["jobs"][1]["error"] == "failed 3 of 3 attempts; last: boom");
  CHECK(j["truncated"] == false);
  // A list cut at --limit says so, to people and to monitoring.
  CHECK(nlohmann::json::parse(sweep::render_jobs_json({running}, counts, true))["truncated"] == true);
  CHECK(sweep::render_jobs_table({running}, counts, "p", true).find("more jobs than these 1 match: --limit 0 lists them all") !=
        std::string::npos);
  CHECK(table.find("more jobs") == std::string::npos);

  // A done job says what it found: a toolchains-only project has no report
  // to read its figures in.
  db::JobRow measured = failed;
  measured.kind = "eval";
  measured.state = "done";
  measured.error = "";
  measured.result_json = R"({"evaluation_id": 4, "uplift": 0.0082, "total_uplift": 0.0061, "failed_modules": 3})";
  db::JobRow lacking = failed;
  lacking.state = "done";
  lacking.error = "";
  lacking.result_json = R"({"build_id": 2, "outcome": "missing-artifact", "message": "lacks llc", "retryable": true})";
  auto done = sweep::render_jobs_table({measured, lacking}, counts, "p");
  CHECK(done.find("uplift +0.82%, total +0.61%, 3 module(s) failed") != std::string::npos);
  CHECK(done.find("build missing-artifact: lacks llc") != std::string::npos);
  auto done_json = nlohmann::json::parse(sweep::render_jobs_json({measured}, counts));
  CHECK(done_json["jobs"][0]["result"]["uplift"] == 0.0082);
}

TEST_CASE("a recipe's ccache remote storage does not change its hash: where outputs are shared does not change them") {
  auto base = std::string("name = \"x\"\n[build]\ncommand = \"make\"\n[artifacts]\ncc = \"{build}/cc\"\n");
  auto plain = builder::parse_recipe(base, "a.toml").take();
  auto shared = builder::parse_recipe("ccache_remote_storage = \"redis://cache:6379\"\n" + base, "b.toml").take();
  CHECK(shared.ccache_remote_storage == "redis://cache:6379");
  CHECK(plain.ccache_remote_storage.empty());
  CHECK(shared.content_hash == plain.content_hash);
}
