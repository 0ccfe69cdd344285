// Workers on the job table as separate processes (`driftwatch worker`), the
// queue as people see it (`driftwatch jobs`), and the faults a farm meets:
// a worker SIGKILLed mid-job, PostgreSQL restarted, a job that always fails,
// two sweeps of one range, a worker whose clock is off. Real processes, real
// PostgreSQL, loopback only; the 8-week history sampled monthly (4 jobs).
#include <doctest/doctest.h>
#include <signal.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "common/process.h"
#include "common/read_file.h"
#include "common/text.h"
#include "tests/support/sweep_project.h"

using testing::Project;
using testing::run_driftwatch;

namespace {

/// The same shape from two prebuilt toolchains (copies of dwcc): jobs that take
/// seconds, not a build, for the faults that need no long job.
void make_toolchains(Project& p) {
  p.make_small();
  p.use_prebuilt_toolchains(DWCC_BIN);
}

common::Child start(const std::vector<std::string>& argv, const std::vector<std::string>& prefix = {}) {
  common::ProcessSpec spec;
  spec.argv = prefix;
  spec.argv.push_back(DRIFTWATCH_BIN);
  spec.argv.insert(spec.argv.end(), argv.begin(), argv.end());
  return common::Child::start(spec).take();
}

/// A sweep that plans its jobs and waits for workers started elsewhere.
common::Child start_external_sweep(Project& p, const std::string& config) {
  return start(p.args({"sweep", "--config", config, "--engine", "external", "-j", "1"}, p.dsn));
}

/// `driftwatch worker` on the project's database.
common::Child start_worker(Project& p, std::vector<std::string> extra = {}, const std::vector<std::string>& prefix = {}) {
  std::vector<std::string> a = {"worker", "-j", "1"};
  a.insert(a.end(), extra.begin(), extra.end());
  return start(p.args(a, p.dsn), prefix);
}

int number(const std::string& s) { return !s.empty() && std::isdigit(static_cast<unsigned char>(s[0])) ? std::stoi(s) : -1; }

/// Waits (up to `seconds`) until the query gives at least `at_least`.
bool wait_for(const Project& p, const std::string& sql, int at_least, double seconds = 120) {
  for (int i = 0; i < seconds * 5; ++i) {
    if (number(p.psql(sql)) >= at_least) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return false;
}

common::ProcessResult finish(common::Child& c, double seconds = 300) {
  for (int i = 0; i < seconds * 5; ++i) {
    if (auto r = c.try_wait()) return *r;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return c.kill_group();
}

/// The embedded PostgreSQL of the project's data directory, which a test can restart.
std::string embedded_dsn(const Project& p) {
  return "host=" + (p.dir / "data" / "postgres").string() + " user=postgres dbname=driftwatch";
}

/// driftwatch on the project's data directory and its embedded database.
common::ProcessResult on_data_dir(const Project& p, std::vector<std::string> a) {
  a.insert(a.begin(), p.data);
  return run_driftwatch(a);
}

/// Stops the embedded server and starts it again three seconds later, as a restart would.
void restart_embedded(const Project& p) {
  REQUIRE(on_data_dir(p, {"db", "stop"}).exit_code == 0);
  std::this_thread::sleep_for(std::chrono::seconds(3));
  REQUIRE(on_data_dir(p, {"db", "start"}).exit_code == 0);
}

/// Every job done, each evaluation stored once and whole (5 modules × 2 heuristics).
void check_whole(const Project& p) {
  CHECK(p.psql("SELECT count(*) FROM jobs WHERE state <> 'done'") == "0");
  CHECK(p.psql("SELECT count(*) FROM builds") == "2");
  CHECK(p.psql("SELECT count(*) FROM evaluations WHERE status = 'done'") == "2");
  CHECK(p.psql("SELECT count(*) FROM evaluations") == "2");
  CHECK(p.psql("SELECT string_agg(n::text, ',') FROM (SELECT count(*) AS n FROM module_results GROUP BY evaluation_id) t") ==
        "10,10");
}

/// Puts a script in place of the second nightly's dwcc, the real one kept
/// beside it (dwcc-real); `script` is given the real one's path.
void wrap_second_nightly(Project& p, const std::function<std::string(const std::string& real)>& script) {
  auto dir = p.dir / "nightly-2026-01-12" / "bin";
  std::filesystem::rename(dir / "dwcc", dir / "dwcc-real");
  std::ofstream(dir / "dwcc") << script((dir / "dwcc-real").string());
  std::filesystem::permissions(dir / "dwcc", std::filesystem::perms::owner_all);
}

/// The project on the sample compiler's recipe (named `name`, its timeout
/// 1 s), configured by `true` and built by `build`; sampled monthly.
void use_recipe_building_by(Project& p, const std::string& name, const std::string& build) {
  std::ifstream in(std::string(DRIFTWATCH_SOURCE_DIR) + "/samples/recipes/sample-compiler.toml");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  auto replace = [&text](const std::string& from, const std::string& to) {
    auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
  };
  replace("name = \"sample-compiler\"", "name = \"" + name + "\"");
  replace("timeout = \"15m\"", "timeout = \"1s\"");
  replace("skip_if_exists = \"build.ninja\"", "");
  replace(
      "command = \"cmake -S {source} -B {build} -G Ninja -DCMAKE_BUILD_TYPE=Release "
      "-DCMAKE_CXX_COMPILER_LAUNCHER={launcher} $(command -v ld.gold >/dev/null && echo "
      "-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=gold)\"",
      "command = \"true\"");
  replace("command = \"ninja -C {build} -j {jobs}\"", "command = \"" + build + "\"");
  auto recipe = (p.dir / (name + ".toml")).string();
  std::ofstream(recipe) << text;
  p.set("recipe = \"sample-compiler\"", "recipe = \"" + recipe + "\"");
  p.set("every = \"2w\"", "every = \"1m\"");
}

/// The sample compiler's own recipe, its ninja step run after `guard` (a
/// shell command that may fail as a machine would), as the project's; its path.
std::string use_recipe_building_after(Project& p, const std::string& name, const std::string& guard) {
  std::ifstream in(std::string(DRIFTWATCH_SOURCE_DIR) + "/samples/recipes/sample-compiler.toml");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  const std::string ninja = "command = \"ninja -C {build} -j {jobs}\"";
  auto at = text.find(ninja);
  REQUIRE(at != std::string::npos);
  text.replace(at, ninja.size(), "command = \"" + guard + "; ninja -C {build} -j {jobs}\"");
  auto recipe = (p.dir / (name + ".toml")).string();
  std::ofstream(recipe) << text;
  p.set("recipe = \"sample-compiler\"", "recipe = \"" + recipe + "\"");
  return recipe;
}

}  // namespace

TEST_CASE("three standalone workers, one SIGKILLed mid-job: its lease expires, another takes the job, every job is done once") {
  Project p;
  p.make_small();
  auto sweep = start_external_sweep(p, p.config);
  REQUIRE(wait_for(p, "SELECT count(*) FROM jobs", 4));
  std::vector<common::Child> workers;
  for (int i = 0; i < 3; ++i) workers.push_back(start_worker(p, {"--lease", "5"}));
  // Kill whichever worker holds a job once it has worked on it for a moment.
  REQUIRE(wait_for(p, "SELECT count(*) FROM jobs WHERE state = 'running' AND started_at < now() - interval '1 second'", 1));
  auto held = p.psql("SELECT id || ' ' || split_part(lease_owner, ':', 2) FROM jobs WHERE state = 'running' ORDER BY id LIMIT 1");
  auto parts = common::split(held, ' ');
  REQUIRE(parts.size() == 2);
  auto job = parts[0];
  int pid = number(parts[1]);
  int victim = -1;
  for (int i = 0; i < 3; ++i)
    if (workers[i].pid() == pid) victim = i;
  REQUIRE_MESSAGE(victim >= 0, ("the job is held by pid " + std::to_string(pid) + ", none of the workers"));
  kill(pid, SIGKILL);
  REQUIRE(workers[victim].wait().signal == SIGKILL);

  auto r = finish(sweep);
  INFO(r.output);
  CHECK(r.exit_code == 0);
  for (int i = 0; i < 3; ++i)
    if (i != victim) workers[i].kill_group();
  check_whole(p);
  // The killed worker's job went to another worker after its lease expired: two attempts, one result.
  CHECK(p.psql("SELECT attempts FROM jobs WHERE id = " + job) == "2");
  CHECK(p.psql("SELECT count(*) FROM jobs WHERE attempts <> 1") == "1");
}

TEST_CASE(
    "a standalone worker stopped by SIGTERM mid-job (scancel, a time limit, preemption) puts the job back at once, its "
    "attempt not counted") {
  Project p;
  p.make_small();
  auto sweep = start_external_sweep(p, p.config);
  REQUIRE(wait_for(p, "SELECT count(*) FROM jobs", 4));
  // A lease far longer than the test: only the hand-back can free the job.
  auto worker = start_worker(p, {"--lease", "600"});
  REQUIRE(
      wait_for(p, "SELECT count(*) FROM jobs WHERE state = 'running' AND started_at < now() - interval '1 second'", 1));
  auto job = p.psql("SELECT id FROM jobs WHERE state = 'running'");
  kill(worker.pid(), SIGTERM);
  auto stopped = finish(worker, 60);
  INFO(stopped.output);
  CHECK(stopped.signal == SIGTERM);  // it still dies of the signal, as Slurm and systemd expect
  CHECK(stopped.output.find("stopped by signal 15: 1 job(s) it held put back in the queue") != std::string::npos);
  CHECK(
      p.psql(
          "SELECT state || ' ' || attempts || ' ' || given_back || ' ' || (lease_owner IS NULL) FROM jobs WHERE id = " +
          job) == "queued 0 1 true");

  auto next = start_worker(p);
  auto r = finish(sweep);
  INFO(r.output);
  CHECK(r.exit_code == 0);
  next.kill_group();
  check_whole(p);
  CHECK(p.psql("SELECT attempts FROM jobs WHERE id = " + job) == "1");
}

TEST_CASE(
    "a running evaluation cancelled by people stops its compiles at the worker's next lease renewal, and stores "
    "nothing") {
  Project p;
  p.make_small();
  // One toolchain whose every compile sleeps 97 s first: run on, its ten
  // modules' compiles would take half an hour; the sleeps are this test's own.
  auto slow = p.slow_toolchain(DWCC_BIN, 97);
  p.set("repo = \"" + p.repo + "\"", "repo = \"\"");
  std::ofstream(p.config, std::ios::app) << "[[toolchains]]\ndir = \"" << slow.string()
                                         << "\"\nlabel = \"slow\"\ndate = \"2026-01-05\"\n";
  auto sleeps = [] {  // this machine's `sleep 97`s, from /proc (procps need not be installed)
    int n = 0;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/proc", ec))
      n += common::proc_file(std::atol(e.path().filename().c_str()), "cmdline") == std::string(
                                                                                       "sleep\0"
                                                                                       "97\0",
                                                                                       9);
    return n;
  };
  auto sweep = start_external_sweep(p, p.config);
  REQUIRE(wait_for(p, "SELECT count(*) FROM jobs WHERE kind = 'eval'", 1));
  auto worker = start_worker(p, {"--lease", "6", "--idle-exit", "3"});
  REQUIRE(wait_for(p, "SELECT count(*) FROM jobs WHERE kind = 'eval' AND state = 'running'", 1));
  auto job = p.psql("SELECT id FROM jobs WHERE kind = 'eval'");
  bool compiling = false;
  for (int i = 0; i < 300 && !compiling; ++i, std::this_thread::sleep_for(std::chrono::milliseconds(200)))
    compiling = sleeps() >= 1;
  REQUIRE_MESSAGE(compiling, "no compile of the slow toolchain started");

  auto cancel = p.run({"jobs", "cancel", job, "--by", "ops"});
  INFO(cancel.output);
  CHECK(cancel.exit_code == 0);
  CHECK(cancel.output.find("cancelled 1 job(s) of every project (cancelled by ops); 1 of them running: its worker "
                           "stops its build or compiles when it next renews the lease") != std::string::npos);
  // The lease is renewed every 2 s: the worker stops the compile, finds the
  // job no longer its own, and exits once idle for 3 s.
  auto stopped = finish(worker, 60);
  INFO(stopped.output);
  CHECK(stopped.exit_code == 0);
  CHECK(stopped.output.find("job " + job + ": its lease was taken") != std::string::npos);
  CHECK(stopped.output.find("its build or compiles are stopped, and nothing of it is stored") != std::string::npos);
  CHECK(stopped.output.find("1 lease(s) lost") != std::string::npos);
  CHECK(sleeps() == 0);
  CHECK(p.psql("SELECT count(*) FROM module_results") == "0");
  CHECK(p.psql("SELECT state || ' ' || error FROM jobs WHERE id = " + job) == "failed cancelled by ops");
  auto r = finish(sweep, 60);
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("cancelled by ops") != std::string::npos);
}

TEST_CASE("PostgreSQL restarted while driftwatch eval compiles: it reconnects and stores what it measured") {
  Project p;
  // A toolchain whose compiler takes two seconds a compile: the restart falls inside the evaluation.
  auto slow = p.slow_toolchain(DWCC_BIN, 2);
  auto embedded = embedded_dsn(p);
  auto dw = [&](const std::vector<std::string>& a) { return on_data_dir(p, a); };
  REQUIRE(dw({"db", "start"}).exit_code == 0);
  auto eval = start({p.data, "eval", "--build", slow.string(), "--suite", "testdata", "--policy",
                     std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/frozen-test.policy", "-j", "2"});
  bool running = false;
  for (int i = 0; i < 600 && !running; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    running = number(Project::psql(embedded, "SELECT count(*) FROM evaluations WHERE status = 'running'")) == 1;
  }
  REQUIRE_MESSAGE(running, "the evaluation did not start");
  restart_embedded(p);
  auto r = finish(eval);
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(Project::psql(embedded, "SELECT string_agg(status, ',') FROM evaluations") == "done");
  CHECK(Project::psql(embedded, "SELECT count(*) FROM module_results") == "10");
  dw({"db", "stop"});
}

TEST_CASE("PostgreSQL restarted while standalone workers run: they reconnect and finish") {
  Project p;
  p.make_small();
  // The embedded database of the data directory, which the test can restart.
  auto embedded = embedded_dsn(p);
  auto dw = [&](const std::vector<std::string>& a) { return on_data_dir(p, a); };
  REQUIRE(dw({"db", "start"}).exit_code == 0);
  auto sweep = start({p.data, "sweep", "--config", p.config, "--engine", "external"});
  for (int i = 0; i < 600 && number(Project::psql(embedded, "SELECT count(*) FROM jobs")) < 4; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::vector<common::Child> workers;
  for (int i = 0; i < 2; ++i) workers.push_back(start({p.data, "worker", "-j", "1", "--idle-exit", "5"}));
  int done = 0;
  for (int i = 0; i < 1500 && done < 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    done = number(Project::psql(embedded, "SELECT count(*) FROM jobs WHERE state = 'done'"));
  }
  REQUIRE_MESSAGE(done >= 1, "the workers did not get going");
  restart_embedded(p);
  auto r = finish(sweep);
  INFO(r.output);
  CHECK(r.exit_code == 0);
  int reconnected = 0;
  for (auto& w : workers) {
    auto wr = finish(w, 60);
    INFO(wr.output);
    CHECK(wr.exit_code == 0);
    if (wr.output.find("reconnecting") != std::string::npos) ++reconnected;
  }
  CHECK(reconnected >= 1);
  CHECK(Project::psql(embedded, "SELECT count(*) FROM jobs WHERE state <> 'done'") == "0");
  CHECK(Project::psql(embedded, "SELECT string_agg(n::text, ',') FROM (SELECT count(*) AS n FROM module_results "
                                "GROUP BY evaluation_id) t") == "10,10");
  dw({"db", "stop"});
}

namespace {

/// Sweeps the toolchain project with one job's payload hash (`field`) made
/// wrong before any worker claims it, as if its file had changed on the
/// worker's machine after planning; the job picked by `which_job` (SQL) fails.
struct CorruptedSweep {
  std::string bad;  ///< the job's id
  common::ProcessResult result;
};
CorruptedSweep sweep_with_wrong_hash(Project& p, const std::string& which_job, const std::string& field) {
  make_toolchains(p);
  auto sweep = start_external_sweep(p, p.config);
  REQUIRE(wait_for(p, "SELECT count(*) FROM jobs", 4));
  auto bad = p.psql(which_job);
  p.psql("UPDATE jobs SET payload = jsonb_set(payload, '{" + field + "}', '\"0123456789abcdef\"') WHERE id = " + bad);
  auto worker = start_worker(p, {"--retry-backoff", "1"});
  auto r = finish(sweep);
  worker.kill_group();
  return {bad, r};
}

}  // namespace

TEST_CASE("a worker refuses a job planned under another recipe than the one it would build with") {
  Project p;
  auto [bad, r] = sweep_with_wrong_hash(p, "SELECT min(id) FROM jobs WHERE kind = 'build'", "recipe_hash");
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("failed: build job " + bad + ": failed 3 of 3 attempts on " + common::host_name() + "; last: recipe ") != std::string::npos);
  CHECK(r.output.find("changed since the sweep was planned (content hash ") != std::string::npos);
  CHECK(p.psql("SELECT count(*) FROM builds") == "1");  // the other check-in's, nothing under the wrong recipe
}

TEST_CASE("a worker refuses an evaluation whose suite on its machine is not the one the sweep planned") {
  Project p;
  auto [bad, r] = sweep_with_wrong_hash(p, "SELECT max(id) FROM jobs WHERE kind = 'eval'", "suite_hash");
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("failed: eval job " + bad + ": failed 3 of 3 attempts on " + common::host_name() + "; last: suite ") != std::string::npos);
  CHECK(r.output.find("is not the one the sweep planned (0123456789ab)") != std::string::npos);
  // Nothing measured under that job: the other check-in's evaluation only.
  CHECK(p.psql("SELECT count(*) FROM evaluations WHERE status = 'done'") == "1");
}

TEST_CASE("a running worker stops when a newer driftwatch migrates the database under it") {
  Project p;
  auto worker = start_worker(p);
  REQUIRE(wait_for(p, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'driftwatch'", 1));
  std::this_thread::sleep_for(std::chrono::seconds(1));  // idle in its claim loop
  p.psql("INSERT INTO schema_migrations (version, name) VALUES (999, 'from a newer driftwatch')");
  auto r = finish(worker, 30);
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("has schema version 999, newer than this driftwatch knows") != std::string::npos);
}

TEST_CASE("a job that always fails ends failed after its attempts with its reason, the rest completes, and people see it in jobs") {
  Project p;
  // The newer check-in's evaluation names a policy that is not the file's: every attempt fails.
  auto [bad, r] = sweep_with_wrong_hash(p, "SELECT max(id) FROM jobs WHERE kind = 'eval'", "policy_hash");
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("failed: eval job " + bad + ": failed 3 of 3 attempts on " + common::host_name() + "; last: policy file") != std::string::npos);
  CHECK(r.output.find("changed since the sweep was planned") != std::string::npos);
  CHECK(p.psql("SELECT state || ' ' || attempts FROM jobs WHERE id = " + bad) == "failed 3");
  CHECK(p.psql("SELECT count(*) FROM jobs WHERE state = 'done'") == "3");

  auto table = p.run({"jobs"});
  INFO(table.output);
  CHECK(table.exit_code == 0);
  CHECK(table.output.find("0 queued, 0 running, 3 done, 0 skipped, 1 failed") != std::string::npos);
  CHECK(table.output.find("failed 3 of 3 attempts") != std::string::npos);
  // Given the project file (or run beside it) and no --db, the queue is its
  // database's, never an empty embedded one's.
  p.set("dsn = \"\"", "dsn = \"" + p.dsn + "\"");
  auto by_file = run_driftwatch({p.data, "jobs", "--config", p.config});
  INFO(by_file.output);
  CHECK(by_file.output.find("0 queued, 0 running, 3 done, 0 skipped, 1 failed") != std::string::npos);
  auto js = p.run({"jobs", "--json", "--all"});
  REQUIRE(js.exit_code == 0);
  auto j = nlohmann::json::parse(js.output);
  CHECK(j["counts"]["failed"] == 1);
  CHECK(j["jobs"].size() == 4);
  CHECK(j["jobs"][0]["state"] == "failed");
  CHECK(j["jobs"][0]["error"].get<std::string>().find("changed since the sweep was planned") != std::string::npos);
  CHECK(nlohmann::json::parse(p.run({"jobs", "--json", "--state", "failed"}).output)["jobs"].size() == 1);
  auto typo = p.run({"jobs", "--json", "--state", "done,faild"});
  CHECK(typo.exit_code == 2);
  CHECK(typo.output.find("jobs --state: unknown state 'faild' (queued, running, done, failed, skipped)") !=
        std::string::npos);
  // So is a project or a sweep the database never had: not an empty queue.
  auto unknown = p.run({"jobs", "--json", "--project", "toyy"});
  CHECK(unknown.exit_code == 2);
  CHECK(common::last_line(unknown.output).find("driftwatch: jobs --project: no sweep or job of project 'toyy' in this "
                                               "database (known: ") == 0);
  CHECK(p.run({"jobs", "--json", "--project", "toy"}).exit_code == 0);
  auto no_sweep = p.run({"jobs", "--sweep", "999999"});
  CHECK(no_sweep.exit_code == 2);
  CHECK(common::last_line(no_sweep.output) == "driftwatch: jobs --sweep: no sweep 999999");
  // A worker may start before its project's first sweep, but says so.
  auto early = p.run({"worker", "--project", "toyy", "--idle-exit", "0"});
  CHECK(early.exit_code == 0);
  CHECK(early.output.find("worker: project toyy has no sweep or job in this database yet (known: ") !=
        std::string::npos);
  CHECK(early.output.find("0 done, 0 skipped, 0 failed") != std::string::npos);
  // Quiet, a worker that did nothing wrong says nothing at its end.
  auto quiet = p.run({"worker", "--project", "toy", "--idle-exit", "0", "-q"});
  INFO(quiet.output);
  CHECK(quiet.exit_code == 0);
  CHECK(quiet.output.find("0 done, 0 skipped, 0 failed") == std::string::npos);

  // People: retry puts it back in the queue (not given as another project's); cancel takes it out again, saying who.
  auto not_mine = p.run({"jobs", "retry", bad, "--project", "someone-else"});
  CHECK(not_mine.exit_code == 2);
  CHECK(common::last_line(not_mine.output) == "driftwatch: job " + bad + " is not of project someone-else");
  CHECK(p.psql("SELECT state FROM jobs WHERE id = " + bad) == "failed");
  auto retry = p.run({"jobs", "retry", bad, "--project", "toy"});
  CHECK(retry.exit_code == 0);
  CHECK(p.psql("SELECT state || ' ' || attempts FROM jobs WHERE id = " + bad) == "queued 0");
  auto wrong = p.run({"jobs", "retry", p.psql("SELECT min(id) FROM jobs")});
  CHECK(wrong.exit_code == 2);
  CHECK(wrong.output.find("is done; only failed or skipped jobs, and builds that gave no compiler, are retried") !=
        std::string::npos);
  // A job of another project is named, not "cancelled 0 job(s)" with exit 0.
  auto elsewhere = p.run({"jobs", "cancel", bad, "--project", "someone-else"});
  CHECK(elsewhere.exit_code == 2);
  CHECK(common::last_line(elsewhere.output) == "driftwatch: job " + bad + " is not of project someone-else");
  CHECK(p.psql("SELECT state FROM jobs WHERE id = " + bad) == "queued");
  // Run in another project's directory with the database named, as in a
  // farm's shell with $DRIFTWATCH_DB: that directory's project file says
  // whose jobs are meant, and toy's are not its.
  auto other_dir = p.dir / "other";
  std::filesystem::create_directories(other_dir);
  {
    std::ifstream in(p.config);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    auto at = text.find("name = \"toy\"");
    REQUIRE(at != std::string::npos);
    std::ofstream(other_dir / "driftwatch.toml") << text.replace(at, 12, "name = \"someone-else\"");
  }
  for (std::vector<std::string> verb :
       {std::vector<std::string>{"cancel", bad}, {"cancel", "--all-queued"}, {"retry", bad}}) {
    common::ProcessSpec beside;
    beside.argv = {DRIFTWATCH_BIN, p.data, "jobs"};
    beside.argv.insert(beside.argv.end(), verb.begin(), verb.end());
    beside.env = {{"DRIFTWATCH_DB", p.dsn}};
    beside.cwd = other_dir;
    auto there = common::run_process(beside).take();
    INFO(there.output);
    if (verb[1] == "--all-queued") {
      CHECK(there.exit_code == 0);
      CHECK(there.output.find("cancelled 0 job(s) of project someone-else") != std::string::npos);
    } else {
      CHECK(there.exit_code == 2);
      CHECK(common::last_line(there.output) == "driftwatch: job " + bad + " is not of project someone-else");
    }
  }
  CHECK(p.psql("SELECT state FROM jobs WHERE id = " + bad) == "queued");
  auto cancel = p.run({"jobs", "cancel", "--all-queued", "--by", "ops"});
  CHECK(cancel.exit_code == 0);
  CHECK(cancel.output.find("cancelled 1 job(s) of every project (cancelled by ops)") != std::string::npos);
  CHECK(p.psql("SELECT state || ' ' || error FROM jobs WHERE id = " + bad) == "failed cancelled by ops");
  // A monitor of failures tells a person's cancellation from a job's failure,
  // and a sweep's counts are that sweep's.
  auto counted = nlohmann::json::parse(p.run({"jobs", "--json"}).output)["counts"];
  CHECK(counted["failed"] == 1);
  CHECK(counted["cancelled"] == 1);
  CHECK(p.run({"jobs"}).output.find("1 failed (1 of them cancelled)") != std::string::npos);
  // One done job no longer of the sweep (as one a later sweep's plan did
  // not include): the sweep's counts leave it out, the project's do not.
  auto sweep_of_bad = p.psql("SELECT sweep_id FROM jobs WHERE id = " + bad);
  p.psql("UPDATE jobs SET sweep_id = NULL WHERE id = (SELECT min(id) FROM jobs WHERE state = 'done')");
  auto of_sweep = nlohmann::json::parse(p.run({"jobs", "--json", "--all", "--sweep", sweep_of_bad}).output);
  int listed = 0;
  for (const char* state : {"queued", "running", "done", "skipped", "failed"})
    listed += of_sweep["counts"][state].get<int>();
  CHECK(listed == static_cast<int>(of_sweep["jobs"].size()));
  CHECK(of_sweep["counts"]["done"].get<int>() + 1 == counted["done"].get<int>());
  auto none = p.run({"jobs", "cancel"});
  CHECK(none.exit_code == 2);
  CHECK(none.output.find("give exactly one of ID, --sweep S or --all-queued") != std::string::npos);
  auto typo_sweep = p.run({"jobs", "cancel", "--sweep", "999"});
  CHECK(typo_sweep.exit_code == 2);
  CHECK(common::last_line(typo_sweep.output) == "driftwatch: no sweep 999; `driftwatch jobs --all` lists jobs by sweep");
  // --project beside --config and no --db: the file still names the database.
  auto by_config = run_driftwatch({p.data, "jobs", "--config", p.config, "--project", "toy", "retry", bad});
  INFO(by_config.output);
  CHECK(by_config.exit_code == 0);
  CHECK(p.psql("SELECT state FROM jobs WHERE id = " + bad) == "queued");
}

TEST_CASE("a sampled check-in whose evaluation was cancelled is named by the report and decide, not passed over") {
  Project p;
  make_toolchains(p);
  auto sweep = start_external_sweep(p, p.config);
  REQUIRE(wait_for(p, "SELECT count(*) FROM jobs", 4));
  // The newer toolchain's evaluation, cancelled while it waits: its build runs, it never does.
  auto bad = p.psql("SELECT max(id) FROM jobs WHERE kind = 'eval'");
  auto newer = p.psql("SELECT payload->>'sha' FROM jobs WHERE id = " + bad);
  auto cancel = p.run({"jobs", "cancel", bad, "--by", "ops"});
  REQUIRE(cancel.exit_code == 0);
  CHECK(cancel.output.find("running") == std::string::npos);  // it waited: no worker to stop
  auto worker = start_worker(p);
  auto r = finish(sweep);
  worker.kill_group();
  INFO(r.output);
  CHECK(r.exit_code == 1);
  REQUIRE(p.psql("SELECT count(*) FROM evaluations WHERE status = 'done'") == "1");

  auto out = p.dir / "report";
  auto rep = p.run({"report", "--config", p.config, "--out", out.string()});
  INFO(rep.output);
  REQUIRE(rep.exit_code == 0);
  auto why = "its evaluation was cancelled (job " + bad + ": cancelled by ops); the next sweep measures it";
  // The summary's latest is the older toolchain, and it says a newer one is missing.
  CHECK(rep.output.find("1 later sampled check-in(s) not measured, the newest toolchain ") != std::string::npos);
  auto j = nlohmann::json::parse(common::read_file(out / "report.json").take());
  REQUIRE(j["not_measured"].size() == 1);
  CHECK(j["not_measured"][0]["commit"]["sha"] == newer);
  CHECK(j["not_measured"][0]["why"] == why);
  CHECK(j["overview"][0]["not_measured_after"] == 1);
  CHECK(j["overview"][0]["newest_not_measured"]["sha"] == newer);
  CHECK(j["overview"][0]["latest"]["sha"] != newer);
  auto md = common::read_file(out / "report.md").take();
  CHECK(md.find("## Not measured") != std::string::npos);
  CHECK(md.find("cancelled by ops") != std::string::npos);
  auto html = common::read_file(out / "index.html").take();
  CHECK(html.find("<section id=\"not-measured\">") != std::string::npos);
  CHECK(html.find("cancelled by ops); the next sweep measures it") != std::string::npos);

  auto d = p.run({"decide", "--config", p.config});
  INFO(d.output);
  CHECK(d.output.find(" (after the suite's last measured check-in: not read by this decision): " + why) !=
        std::string::npos);
  auto dj = p.run({"decide", "--config", p.config, "--json"});
  auto decided = nlohmann::json::parse(dj.output);
  REQUIRE(decided["not_measured"].size() == 1);
  CHECK(decided["not_measured"][0]["sha"] == newer);
  CHECK(decided["not_measured"][0]["after_head"] == true);

  // Measured by the next sweep: no longer named.
  auto again = p.run({"sweep", "--config", p.config});
  INFO(again.output);
  CHECK(again.exit_code == 0);
  REQUIRE(p.run({"report", "--config", p.config, "--out", out.string()}).exit_code == 0);
  j = nlohmann::json::parse(common::read_file(out / "report.json").take());
  CHECK(j["not_measured"].empty());
  CHECK(j["overview"][0]["latest"]["sha"] == newer);
  CHECK(p.run({"decide", "--config", p.config}).output.find("not measured on") == std::string::npos);
}

TEST_CASE("a repository's sampled check-in whose evaluation was cancelled is named too: its jobs name the checkout") {
  Project p;
  p.make_small();  // the repository's history, not toolchains: jobs carry the checkout's location
  auto sweep = start_external_sweep(p, p.config);
  REQUIRE(wait_for(p, "SELECT count(*) FROM jobs WHERE kind = 'eval'", 2));
  auto bad = p.psql("SELECT max(id) FROM jobs WHERE kind = 'eval'");
  auto sha = p.psql("SELECT payload->>'sha' FROM jobs WHERE id = " + bad);
  REQUIRE(p.run({"jobs", "cancel", bad, "--by", "ops"}).exit_code == 0);
  auto worker = start_worker(p);
  auto r = finish(sweep);
  worker.kill_group();
  INFO(r.output);
  CHECK(r.exit_code == 1);
  auto out = p.dir / "report";
  REQUIRE(p.run({"report", "--config", p.config, "--out", out.string()}).exit_code == 0);
  auto j = nlohmann::json::parse(common::read_file(out / "report.json").take());
  REQUIRE(j["not_measured"].size() == 1);
  CHECK(j["not_measured"][0]["commit"]["sha"] == sha);
  CHECK(nlohmann::json::parse(p.run({"decide", "--config", p.config, "--json"}).output)["not_measured"].size() == 1);
}

TEST_CASE("two sweeps enqueueing the same range at once share its jobs: nothing is built or evaluated twice") {
  Project p;
  make_toolchains(p);
  // A second project on the same repository, recipe, policy and suite.
  auto other = (p.dir / "proj" / "other.toml").string();
  {
    std::ifstream in(p.config);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    auto at = text.find("name = \"toy\"");
    REQUIRE(at != std::string::npos);
    text.replace(at, 12, "name = \"toy2\"");
    std::ofstream(other) << text;
  }
  auto first = start_external_sweep(p, p.config);
  auto second = start_external_sweep(p, other);
  REQUIRE(wait_for(p, "SELECT count(*) FROM sweeps", 2));
  auto workers = std::vector<common::Child>{};
  for (int i = 0; i < 2; ++i) workers.push_back(start_worker(p));
  auto r1 = finish(first), r2 = finish(second);
  for (auto& w : workers) w.kill_group();
  INFO(r1.output);
  INFO(r2.output);
  CHECK(r1.exit_code == 0);
  CHECK(r2.exit_code == 0);
  CHECK(p.psql("SELECT count(*) FROM jobs") == "4");
  CHECK(p.psql("SELECT sum(attempts) FROM jobs") == "4");
  check_whole(p);
}

TEST_CASE("a worker whose clock is ten minutes ahead does not take a live lease: leases are in the database's clock") {
  Project p;
  make_toolchains(p);
  common::ProcessSpec probe;
  probe.argv = {"faketime", "-f", "+10m", "date", "+%s"};
  auto faked = common::run_process(probe);
  REQUIRE_MESSAGE((faked && faked->ok()), "faketime (Debian's faketime package) is needed: bash scripts/setup");
  auto ahead = std::stoll(common::trim(faked->output)) - std::chrono::duration_cast<std::chrono::seconds>(
                                                             std::chrono::system_clock::now().time_since_epoch())
                                                             .count();
  REQUIRE(ahead > 500);

  auto sweep = start_external_sweep(p, p.config);
  REQUIRE(wait_for(p, "SELECT count(*) FROM jobs", 4));
  // Another machine holds the older check-in's evaluation, its lease 90 s from now in the database's clock.
  auto held = p.psql("SELECT min(id) FROM jobs WHERE kind = 'eval'");
  p.psql("UPDATE jobs SET state = 'running', attempts = 1, lease_owner = 'elsewhere:1:0', started_at = now(), "
         "lease_expires_at = now() + interval '90 seconds' WHERE id = " + held);
  auto skewed = start_worker(p, {"--idle-exit", "0"}, {"faketime", "-f", "+10m"});
  auto w = finish(skewed);
  INFO(w.output);
  CHECK(w.exit_code == 0);
  CHECK(w.output.find("3 done") != std::string::npos);
  CHECK(p.psql("SELECT state || ' ' || attempts || ' ' || lease_owner FROM jobs WHERE id = " + held) ==
        "running 1 elsewhere:1:0");
  auto list = p.run({"jobs"});
  CHECK(list.output.find("elsewhere:1:0 for ") != std::string::npos);
  CHECK(list.output.find(" left") != std::string::npos);

  // The report reads the job as running while its lease lives, and as its worker's death once it lapsed.
  auto why_not_measured = [&] {
    auto out = p.dir / "report-held";
    auto rep = p.run({"report", "--config", p.config, "--out", out.string(), "--format", "json"});
    REQUIRE_MESSAGE(rep.exit_code == 0, rep.output);
    auto j = nlohmann::json::parse(common::read_file(out / "report.json").take());
    REQUIRE(j["not_measured"].size() == 1);
    return j["not_measured"][0]["why"].get<std::string>();
  };
  CHECK(why_not_measured() == "its evaluation is running (job " + held + ")");
  // Once that lease has expired (the other machine died), the same skewed worker takes the job.
  p.psql("UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE id = " + held);
  CHECK(why_not_measured() == "its evaluation (job " + held +
                                  ") stopped: its worker (elsewhere:1) stopped renewing its lease (it, its machine or "
                                  "its link to the database died); a worker, or the next sweep, takes it up again");
  auto again = start_worker(p, {"--idle-exit", "0"}, {"faketime", "-f", "+10m"});
  auto w2 = finish(again);
  INFO(w2.output);
  CHECK(w2.output.find("1 done") != std::string::npos);
  auto r = finish(sweep);
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(p.psql("SELECT attempts FROM jobs WHERE id = " + held) == "2");
  check_whole(p);
}

TEST_CASE("an external sweep that no worker serves fails after --stall-timeout, and its jobs wait for the next") {
  Project p;
  make_toolchains(p);
  auto sweep = p.args({"sweep", "--config", p.config, "--engine", "external", "--stall-timeout", "3"}, p.dsn);
  auto r = run_driftwatch(sweep);
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("no worker has run a job of this sweep for 3 s") != std::string::npos);
  CHECK(p.psql("SELECT count(*) FROM jobs WHERE state = 'queued'") == "4");
  // The sweep is recorded as failed, with its reason, and the report says so
  // until a sweep analyses what it left.
  CHECK(p.psql("SELECT state || ': ' || message FROM sweeps") ==
        "failed: no worker has run a job of this sweep for 3 s; start workers on the job table (driftwatch worker, "
        "docs/farm.md). The jobs stay queued; --stall-timeout sets how long to wait");
  auto out = p.dir / "report-stalled";
  auto report =
      run_driftwatch(p.args({"report", "--config", p.config, "--out", out.string(), "--format", "md"}, p.dsn));
  REQUIRE_MESSAGE(report.exit_code == 0, report.output);
  CHECK(common::read_file(out / "report.md").take().find("failed before it finished (no worker has run a job") !=
        std::string::npos);
  // A worker later: the same jobs finish, none twice.
  auto worker = start_worker(p);
  auto again = run_driftwatch(p.args({"sweep", "--config", p.config, "--engine", "external"}, p.dsn));
  worker.kill_group();
  INFO(again.output);
  CHECK(again.exit_code == 0);
  CHECK(p.psql("SELECT count(*) FROM jobs WHERE state = 'done'") == "4");
  CHECK(p.psql("SELECT sum(attempts) FROM jobs") == "4");
  // Local workers cannot stall: the option is refused there.
  auto local = run_driftwatch(p.args({"sweep", "--config", p.config, "--stall-timeout", "3"}, p.dsn));
  CHECK(local.exit_code == 2);
  CHECK(local.output.find("--stall-timeout needs --engine slurm or external") != std::string::npos);
  // Nor are workers this process would never start.
  auto workers =
      run_driftwatch(p.args({"sweep", "--config", p.config, "--engine", "external", "--workers", "4"}, p.dsn));
  CHECK(workers.exit_code == 2);
  CHECK(workers.output.find("--workers starts local threads or Slurm tasks") != std::string::npos);
}

TEST_CASE("an evaluation the machine fails on every attempt fails its job and stores nothing, and the next sweep "
          "tries it again") {
  Project p;
  make_toolchains(p);
  // The second nightly's compiler cannot be started on any compile, with
  // the policy or without (its interpreter is gone, as a binary removed
  // under the sweep is). Stored, this would read as the policy unable to
  // run there (an alert, a retraining), or as a broken check-in.
  wrap_second_nightly(p, [](const std::string&) { return "#!/nonexistent/sh\n"; });
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  CHECK(s.exit_code == 1);
  CHECK(s.output.find("the machine's failure on every attempt: nothing is stored") != std::string::npos);
  auto job = "SELECT state || ' ' || attempts FROM jobs WHERE kind = 'eval' AND payload->>'label' = "
             "'nightly 2026-01-12'";
  CHECK(p.psql(job) == "failed 3");
  CHECK(p.psql("SELECT count(*) FILTER (WHERE status = 'done') || ' ' || count(*) FILTER (WHERE status = 'failed') "
               "|| ' ' || count(*) FILTER (WHERE status = 'running') FROM evaluations") == "1 0 0");

  // The machine is sound again: the next sweep tries the job once more and measures it.
  auto dir = p.dir / "nightly-2026-01-12" / "bin";
  std::filesystem::remove(dir / "dwcc");
  std::filesystem::rename(dir / "dwcc-real", dir / "dwcc");
  auto again = p.sweep(p.dsn);
  INFO(again.output);
  CHECK(again.exit_code == 0);
  CHECK(p.psql(job) == "done 1");
  CHECK(p.psql("SELECT count(*) FILTER (WHERE status = 'done') || ' ' || count(*) FILTER (WHERE status = 'failed') "
               "FROM evaluations") == "2 0");
}

TEST_CASE("a default-decision probe killed on every attempt fails its job and stores nothing, never 'the policy "
          "cannot run'") {
  Project p;
  make_toolchains(p);
  // A policy with a margin: its evaluation first probes, with a tiny module,
  // where the compiler sends its default decision.
  p.set(std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/frozen-test.policy",
        std::string(DRIFTWATCH_SOURCE_DIR) + "/samples/policies/sample-compiler-v1.0.policy");
  // The second nightly's probe is SIGKILLed every time (an OOM killer taking
  // the biggest process under load); its other compiles are sound. Stored,
  // it would read as the policy unable to run there: an alert, a retraining.
  wrap_second_nightly(p, [](const std::string& real) {
    return "#!/bin/sh\ncase \"$*\" in *default-slot-probe.ll*) kill -9 $$;; esac\nexec " + real + " \"$@\"\n";
  });
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  CHECK(s.exit_code == 1);
  CHECK(s.output.find("cannot probe the compiler's ML channel") != std::string::npos);
  CHECK(s.output.find("the machine's failure on every attempt: nothing is stored") != std::string::npos);
  CHECK(p.psql("SELECT state || ' ' || attempts FROM jobs WHERE kind = 'eval' AND payload->>'label' = "
               "'nightly 2026-01-12'") == "failed 3");
  CHECK(p.psql("SELECT count(*) FILTER (WHERE status = 'done') || ' ' || count(*) FILTER (WHERE status = 'failed') "
               "FROM evaluations") == "1 0");
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE kind = 'policy-unusable'") == "0");
}

TEST_CASE("an evaluation whose learned compiles are killed after asking the policy on every attempt is stored as the "
          "check-in's result") {
  Project p;
  make_toolchains(p);
  // The second nightly's compiles with the policy are SIGKILLed every time
  // after they asked it, those without it never: a policy that inlines
  // without end can do that, so the last attempt stores it.
  wrap_second_nightly(p, [](const std::string& real) {
    return "#!/bin/sh\ncase \"$*\" in *interactive-channel*) " + real + " \"$@\"; kill -9 $$;; esac\nexec " + real +
           " \"$@\"\n";
  });
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  CHECK(s.exit_code == 0);
  CHECK(p.psql("SELECT state || ' ' || attempts FROM jobs WHERE kind = 'eval' AND payload->>'label' = "
               "'nightly 2026-01-12'") == "done 3");
  CHECK(p.psql("SELECT count(*) FILTER (WHERE status = 'done') || ' ' || count(*) FILTER (WHERE status = 'failed') "
               "FROM evaluations") == "1 1");
  auto failed = p.psql("SELECT summary->>'error' || ' ' || (summary->>'compiler_broken') FROM evaluations "
                       "WHERE status = 'failed'");
  CHECK(failed.find("killed by signal 9") != std::string::npos);
  CHECK(failed.find(" false") != std::string::npos);
  CHECK(p.psql("SELECT count(*) FROM evaluations WHERE status IN ('interrupted', 'running')") == "0");
}

TEST_CASE("a toolchain whose directory never came fails each sweep until its entry is removed, then no more") {
  Project p;
  make_toolchains(p);
  auto entry = "[[toolchains]]\ndir = \"" + (p.dir / "nightly-never-published").string() +
               "\"\nlabel = \"nightly 2026-01-19\"\ndate = \"2026-01-19\"\n";
  std::ofstream(p.config, std::ios::app) << entry;
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  CHECK(s.exit_code == 1);
  CHECK(p.psql("SELECT count(*) FROM jobs WHERE state = 'failed'") == "1");
  // The nightly was never published: its entry goes, and the failed job with it.
  // The edited list is analysed again (nothing to run), and the night after is quiet.
  p.set(entry, "");
  auto again = p.sweep(p.dsn, {"--new"});
  INFO(again.output);
  CHECK(again.exit_code == 0);
  CHECK(again.output.find("the project's toolchains were edited since the last sweep") != std::string::npos);
  CHECK(p.psql("SELECT count(*) FROM jobs WHERE state = 'failed'") == "1");
  auto quiet = p.sweep(p.dsn, {"--new"});
  INFO(quiet.output);
  CHECK(quiet.exit_code == 0);
  CHECK(quiet.output.find("nothing new since the last sweep") != std::string::npos);
  CHECK(p.psql("SELECT count(*) FROM jobs WHERE state = 'failed'") == "1");
}

TEST_CASE("sweep --new measures a toolchain added since the last sweep, and only that one") {
  Project p;
  make_toolchains(p);
  p.sweep_ok();
  CHECK(p.psql("SELECT count(*) FROM jobs WHERE state = 'done'") == "4");
  // The nightly job adds the next night's toolchain to the project file.
  auto prefix = p.dir / "nightly-2026-01-19";
  std::filesystem::create_directories(prefix / "bin");
  std::filesystem::copy_file(DWCC_BIN, prefix / "bin" / "dwcc");
  std::ofstream(p.config, std::ios::app) << "[[toolchains]]\ndir = \"" << prefix.string()
                                         << "\"\nlabel = \"nightly 2026-01-19\"\ndate = \"2026-01-19\"\n";
  auto r = p.sweep(p.dsn, {"--new"});
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("1 check-in(s) × 1 suite(s): 2 jobs") != std::string::npos);
  CHECK(p.psql("SELECT count(*) FROM jobs WHERE state = 'done'") == "6");
  CHECK(p.psql("SELECT count(*) FROM evaluations WHERE status = 'done'") == "3");
  auto again = p.sweep(p.dsn, {"--new"});
  INFO(again.output);
  CHECK(again.exit_code == 0);
  CHECK(again.output.find("nothing new since the last sweep") != std::string::npos);
}

TEST_CASE("an evaluation where the machine failed too many compiles to retry one by one is tried again whole, not stored") {
  Project p;
  make_toolchains(p);
  // The second nightly's first two compiles of three of the five modules are
  // SIGKILLed, as by an OOM killer under load: six failures, more than an
  // evaluation tries again alone. Stored, they would read as the policy
  // failing on three modules at that check-in.
  auto counts = (p.dir / "nightly-2026-01-12" / "bin").string();
  wrap_second_nightly(p, [&counts](const std::string& real) {
    return "#!/bin/sh\ncase \"$(basename \"$1\")\" in hashtable*|ini*|json*) n=" + counts +
           "/$(basename \"$1\").count; echo x >> \"$n\"; [ \"$(wc -l < \"$n\")\" -le 2 ] && kill -9 $$;; esac\nexec " +
           real + " \"$@\"\n";
  });
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  CHECK(s.exit_code == 0);
  CHECK(s.output.find("the machine failed 6 compiles, too many to try again one by one") != std::string::npos);
  CHECK(p.psql("SELECT state || ' ' || attempts FROM jobs WHERE kind = 'eval' AND payload->>'label' = "
               "'nightly 2026-01-12'") == "done 2");
  // The second attempt measured every module; the first left no row running.
  CHECK(p.psql("SELECT count(*) FROM module_results WHERE outcome <> 'ok'") == "0");
  CHECK(p.psql("SELECT count(*) FILTER (WHERE status = 'done') || ' ' || count(*) FILTER (WHERE status = 'running') "
               "FROM evaluations") == "2 0");
}

TEST_CASE("nightlies whose byte-identical wrapper scripts run different compilers are each measured, never reused") {
  Project p;
  make_toolchains(p);
  // The usual layout of a nightly directory: bin/ holds a wrapper that
  // execs the real compiler beside it, the same bytes in every nightly.
  for (const char* date : {"2026-01-05", "2026-01-12"}) {
    auto bin = p.dir / (std::string("nightly-") + date) / "bin";
    std::filesystem::rename(bin / "dwcc", bin / "dwcc-real");
    std::ofstream(bin / "dwcc") << "#!/bin/sh\nexec \"$(dirname \"$0\")/dwcc-real\" \"$@\"\n";
    std::filesystem::permissions(bin / "dwcc", std::filesystem::perms::owner_all);
  }
  // The second nightly's real compiler fails one module.
  auto bin = p.dir / "nightly-2026-01-12" / "bin";
  std::filesystem::rename(bin / "dwcc-real", bin / "dwcc-inner");
  std::ofstream(bin / "dwcc-real") << "#!/bin/sh\ncase \"$(basename \"$1\")\" in hashtable*) echo 'LLVM ERROR: boom' "
                                      ">&2; exit 1;; esac\nexec \"$(dirname \"$0\")/dwcc-inner\" \"$@\"\n";
  std::filesystem::permissions(bin / "dwcc-real", std::filesystem::perms::owner_all);

  auto s = p.sweep(p.dsn);
  INFO(s.output);
  CHECK(s.exit_code == 0);
  CHECK(s.output.find("reused from") == std::string::npos);
  CHECK(p.psql("SELECT count(*) FROM evaluations WHERE status = 'done' AND summary ? 'reuse_key'") == "0");
  // The second nightly measured its own compiler: the module it fails.
  CHECK(p.psql("SELECT count(DISTINCT evaluation_id) FROM module_results WHERE message LIKE '%LLVM ERROR: boom%'") ==
        "1");
}

TEST_CASE("a compiler failing a module in words that are not UTF-8 is stored as its result, not retried for ever") {
  Project p;
  make_toolchains(p);
  // The second nightly fails one module under both heuristics with a
  // message holding a Latin-1 byte (a path or an identifier of old code).
  // Its evaluation's record once threw on the byte: the job failed on every
  // attempt and every night, and the check-in was never measured.
  wrap_second_nightly(p, [](const std::string& real) {
    return "#!/bin/sh\ncase \"$(basename \"$1\")\" in hashtable*) printf 'LLVM ERROR: cannot select caf\\351\\n' >&2; "
           "exit 1;; esac\nexec " + real + " \"$@\"\n";
  });
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  CHECK(s.exit_code == 0);
  CHECK(p.psql("SELECT state || ' ' || attempts FROM jobs WHERE kind = 'eval' AND payload->>'label' = "
               "'nightly 2026-01-12'") == "done 1");
  // The sweep's line for that evaluation says a module failed, not only its figures.
  CHECK(s.output.find("1 module(s) failed to compile (first: hashtable") != std::string::npos);
  CHECK(p.psql("SELECT count(*) FROM evaluations WHERE status = 'done'") == "2");
  // The byte is stored as U+FFFD, in the module's row and in the evaluation's summary.
  CHECK(p.psql("SELECT DISTINCT message FROM module_results WHERE outcome <> 'ok'") ==
        "compiler exit status 1: LLVM ERROR: cannot select caf\xef\xbf\xbd");
  CHECK(p.psql("SELECT count(*) FROM evaluations WHERE summary::text LIKE '%caf\xef\xbf\xbd%'") == "1");
  // And `eval --json` prints such a result (it threw once it was stored).
  auto e = p.run({"eval", "--build", (p.dir / "nightly-2026-01-12").string(), "--suite", "testdata", "--policy",
                  std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/frozen-test.policy", "--json"});
  INFO(e.output);
  CHECK(e.exit_code == 0);
  CHECK(e.output.find("caf\xef\xbf\xbd") != std::string::npos);
}

TEST_CASE("a check-in whose build times out twice is recorded as such, and the next sweep does not build it again") {
  Project p;
  // The sample compiler's recipe, but its build never ends (a generator
  // step in an endless loop, say). Each attempt notes its -j.
  auto jobs_log = p.dir / "build-jobs";
  use_recipe_building_by(p, "hangs", "echo {jobs} >> " + jobs_log.string() + " && sleep 30");

  auto first = p.sweep(p.dsn);
  INFO(first.output);
  CHECK(first.output.find("timed out after 1.0 s in build (not cached); the build job's attempt before timed out too: "
                          "recorded as the check-in's") != std::string::npos);
  CHECK(first.output.find("[5/4]") == std::string::npos);  // a retried attempt is not a finished job
  auto sampled = p.psql("SELECT count(*) FROM jobs WHERE kind = 'build'");
  REQUIRE(std::stoi(sampled) >= 2);
  // Each build job: two attempts, then the timeout is the check-in's result.
  // A third would spend one more timeout (hours, for LLVM) on a hang.
  CHECK(p.psql("SELECT count(*) FROM jobs WHERE kind = 'build' AND state = 'done' AND attempts = 2") == sampled);
  CHECK(p.psql("SELECT count(*) FROM builds WHERE outcome = 'timeout'") == sampled);
  CHECK(p.psql("SELECT count(*) FROM jobs WHERE kind = 'eval' AND state <> 'skipped'") == "0");
  CHECK(p.psql("SELECT DISTINCT log_tail LIKE '%the build job''s attempt before timed out too%' FROM builds") == "t");
  // The retry after a timeout runs at the same -j: at half of it (the retry
  // after a failure on this machine) it would only be likelier to time out.
  auto seen = common::read_file(jobs_log).take();
  INFO(seen);
  auto lines = common::split(common::trim(seen), '\n');
  CHECK(lines.size() == 2 * std::stoul(sampled));
  CHECK(std::set<std::string>(lines.begin(), lines.end()).size() == 1);
  CHECK(first.output.find("built again at -j") == std::string::npos);
  // Named in the summary, which a quiet (-q) night prints too; by the sweep that ran them only.
  auto built_first = p.psql("SELECT payload->>'sha' FROM jobs WHERE kind = 'build' ORDER BY id LIMIT 1");
  auto first_job = p.psql("SELECT id FROM jobs WHERE kind = 'build' ORDER BY id LIMIT 1");
  CHECK(first.output.find("  did not build: " + built_first.substr(0, 12) + " (build job " + first_job +
                          "): timeout (") != std::string::npos);

  // Before, every night's sweep put the jobs back and spent the timeouts again on each.
  auto again = p.sweep(p.dsn);
  INFO(again.output);
  CHECK(again.output.find("timed out") == std::string::npos);
  CHECK(again.output.find("did not build") == std::string::npos);
  CHECK(p.psql("SELECT count(*) FROM jobs WHERE kind = 'build' AND attempts = 2 AND state = 'done'") == sampled);
  // People may try one again (its generator fixed on the machine, say), and its evaluation with it.
  auto id = p.psql("SELECT min(id) FROM jobs WHERE kind = 'build'");
  auto retry = p.run({"jobs", "retry", id});
  INFO(retry.output);
  CHECK(retry.exit_code == 0);
  CHECK(p.psql("SELECT state FROM jobs WHERE id = " + id) == "queued");
  CHECK(p.psql("SELECT count(*) FROM jobs WHERE depends_on = " + id + " AND state = 'queued'") == "1");
}

TEST_CASE("with two local workers and no -j, a build, one at a time, takes all the cores") {
  Project p;
  auto log = p.dir / "build-jobs";
  use_recipe_building_by(p, "counts-jobs", "echo {jobs} >> " + log.string() + " && echo 'error: stop here' && exit 1");
  auto r = run_driftwatch(p.args({"sweep", "--config", p.config, "--workers", "2"}, p.dsn));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  std::ifstream in(log);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  REQUIRE(lines.size() >= 2);  // both sampled check-ins
  // Before, each of the two workers built at -j cores/2 while the other waited on the work tree.
  auto cores = std::to_string(std::max(1u, std::thread::hardware_concurrency()));
  for (const auto& line : lines) CHECK(line == cores);
}

TEST_CASE("a build whose last attempt times out after two lost to a full disk is the machine's: failed, not recorded") {
  Project p;
  // Each check-in's first two builds fail for a full disk; the third hangs.
  // (Counted by the check-in's sources: the build directory is shared.)
  auto counts = (p.dir / "counts").string();
  std::filesystem::create_directories(counts);
  use_recipe_building_by(p, "disk-then-hang",
                         "n=" + counts + "/$(find {source} -type f | sort | xargs cat | md5sum | cut -c1-12); "
                         "echo x >> $n; if [ $(wc -l < $n) -le 2 ]; then "
                         "echo 'ld: final link failed: No space left on device'; exit 1; fi; sleep 30");
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  CHECK(s.exit_code == 1);
  auto sampled = p.psql("SELECT count(*) FROM jobs WHERE kind = 'build'");
  REQUIRE(std::stoi(sampled) >= 1);
  // Failed, to be tried again by the next sweep; no timeout stands as any check-in's result.
  CHECK(p.psql("SELECT count(*) FROM jobs WHERE kind = 'build' AND state = 'failed' AND attempts = 3") == sampled);
  CHECK(p.psql("SELECT count(*) FROM builds WHERE outcome = 'timeout'") == "0");
}

TEST_CASE("a build the OOM killer takes is tried again on that machine at half the jobs, and then builds") {
  Project p;
  p.make_small();
  // The sample compiler's recipe, but its build is killed whenever it runs
  // more than one job at once, as a parallel link is on a small machine.
  use_recipe_building_after(p, "small-machine",
                            "if [ {jobs} -gt 1 ]; then echo 'c++: fatal error: Killed signal terminated program "
                            "cc1plus'; exit 1; fi");
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  CHECK(s.exit_code == 0);
  CHECK(p.psql("SELECT count(*) FROM builds WHERE outcome = 'ok'") == p.psql("SELECT count(*) FROM jobs WHERE kind = 'build'"));
  CHECK(p.psql("SELECT min(attempts) || ' ' || max(attempts) FROM jobs WHERE kind = 'build'") == "2 2");
  CHECK(s.output.find("failed on this machine before, built again at -j 1") != std::string::npos);
}

TEST_CASE("a check-in whose build fails without a word under ninja on every attempt is recorded then, never cached") {
  Project p;
  // Every build's compile is SIGKILLed with nothing to say so, as clang is
  // by the OOM killer: ninja prints the command and stops. Each attempt
  // may be the machine's; the last records the check-in's failure.
  auto rules = p.dir / "killed.ninja";
  std::ofstream(rules) << "rule k\n  command = kill -KILL $$$$\nbuild out: k\n";
  use_recipe_building_by(p, "killed", "ninja -f " + rules.string());
  auto first = p.sweep(p.dsn);
  INFO(first.output);
  CHECK(first.output.find("commands under ninja failed without a word, as killed ones do: not cached") !=
        std::string::npos);
  CHECK(first.output.find("the build job's last attempt failed so too: recorded as the check-in's") !=
        std::string::npos);
  auto sampled = p.psql("SELECT count(*) FROM jobs WHERE kind = 'build'");
  REQUIRE(std::stoi(sampled) >= 2);
  CHECK(p.psql("SELECT count(*) FROM jobs WHERE kind = 'build' AND state = 'done' AND attempts = 3") == sampled);
  CHECK(p.psql("SELECT count(*) FROM builds WHERE outcome = 'build-failed'") == sampled);
  // Recorded, not cached: the compile cache holds no failure for these check-ins.
  // Each attempt left its unpublished generation (its log, until the next
  // try); no entry names one.
  int entries = 0, unpublished = 0;
  REQUIRE(std::filesystem::is_directory(p.dir / "data" / "cache"));
  for (const auto& recipe : std::filesystem::directory_iterator(p.dir / "data" / "cache"))
    for (const auto& e : std::filesystem::directory_iterator(recipe.path()))
      (e.path().filename().string().find(".gen-") != std::string::npos ? unpublished : entries) += 1;
  CHECK(unpublished > 0);
  CHECK(entries == 0);
  // The next sweep leaves them; people may try one again.
  auto again = p.sweep(p.dsn);
  INFO(again.output);
  CHECK(again.output.find("without a word") == std::string::npos);
  auto id = p.psql("SELECT min(id) FROM jobs WHERE kind = 'build'");
  auto retry = p.run({"jobs", "retry", id});
  INFO(retry.output);
  CHECK(retry.exit_code == 0);
  CHECK(p.psql("SELECT state FROM jobs WHERE id = " + id) == "queued");
}

TEST_CASE(
    "a check-in recorded as not building by the machine's doing is measured after `jobs retry`, or after "
    "`build --rebuild`") {
  Project p;
  p.make_small();
  // The sample compiler's recipe, but its link dies of a bus error while a
  // file says the machine is failing: on both tries of every attempt, so
  // the check-in is recorded as not building (and that result cached).
  auto failing = p.dir / "bus-error";
  std::ofstream(failing) << "";
  auto recipe = use_recipe_building_after(
      p, "flaky-disk",
      "if [ -e " + failing.string() +
          " ]; then echo 'collect2: fatal error: ld terminated with signal 7 [Bus error]'; exit 1; fi");
  auto first = p.sweep(p.dsn);
  INFO(first.output);
  auto builds = p.psql("SELECT count(*) FROM jobs WHERE kind = 'build'");
  REQUIRE(std::stoi(builds) >= 2);
  REQUIRE(p.psql("SELECT count(*) FROM builds WHERE outcome = 'build-failed'") == builds);
  REQUIRE(p.psql("SELECT count(*) FROM evaluations") == "0");
  std::filesystem::remove(failing);
  // The machine is mended, but the check-ins' results stand: nothing is measured on its own.
  auto unchanged = p.sweep(p.dsn);
  INFO(unchanged.output);
  CHECK(p.psql("SELECT count(*) FROM evaluations") == "0");
  // Each says its build job, and how to build it again.
  auto one = p.psql("SELECT min(id) FROM jobs WHERE kind = 'build'");
  auto one_sha = p.psql("SELECT payload->>'sha' FROM jobs WHERE id = " + one);
  CHECK(first.output.find("did not build: " + one_sha.substr(0, 12) + " (build job " + one + "): build-failed") !=
        std::string::npos);
  CHECK(first.output.find("`driftwatch jobs retry <build job>` builds it again") != std::string::npos);

  // A person retries one build: built again, not the cached failure; its evaluation follows.
  auto retry = p.run({"jobs", "retry", one});
  INFO(retry.output);
  REQUIRE(retry.exit_code == 0);
  auto after_retry = p.sweep(p.dsn);
  INFO(after_retry.output);
  CHECK(after_retry.exit_code == 0);
  CHECK(after_retry.output.find("retried by hand, built again") != std::string::npos);
  CHECK(p.psql("SELECT result->>'outcome' FROM jobs WHERE id = " + one) == "ok");
  CHECK(p.psql("SELECT count(*) FROM jobs WHERE kind = 'eval' AND state = 'done' AND depends_on = " + one) == "1");
  CHECK(p.psql("SELECT count(*) FROM evaluations WHERE status = 'done'") == "1");

  // Another is built by hand (`build --rebuild`): the next sweep takes its compiler and measures it.
  auto other = p.psql("SELECT max(id) FROM jobs WHERE kind = 'build'");
  auto sha = p.psql("SELECT payload->>'sha' FROM jobs WHERE id = " + other);
  auto rebuilt = p.run({"build", "--repo", p.repo, "--recipe", recipe, "--commit", sha, "--rebuild"});
  INFO(rebuilt.output);
  REQUIRE(rebuilt.exit_code == 0);
  auto after_rebuild = p.sweep(p.dsn);
  INFO(after_rebuild.output);
  CHECK(after_rebuild.exit_code == 0);
  CHECK(p.psql("SELECT result->>'outcome' FROM jobs WHERE id = " + other) == "ok");
  CHECK(p.psql("SELECT count(*) FROM jobs WHERE kind = 'eval' AND state = 'done' AND depends_on = " + other) == "1");
  // And the sweep after that builds nothing again: the retried jobs are done.
  auto quiet = p.sweep(p.dsn);
  INFO(quiet.output);
  CHECK(quiet.output.find("] build ") == std::string::npos);
}

TEST_CASE("a local sweep names a job that failed outside its own workers: given up when claimed after a dead worker's last attempt") {
  Project p;
  auto first = p.sweep(p.dsn);
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  // A worker on another machine died during the last attempt of an
  // evaluation job: running, its lease expired, no attempt left.
  auto id = p.psql("SELECT min(id) FROM jobs WHERE kind = 'eval'");  // one of the planned grid's
  p.psql("UPDATE jobs SET state = 'running', attempts = max_attempts, lease_owner = 'elsewhere:1:0', "
         "lease_expires_at = now() - interval '1 minute' WHERE id = " + id);
  auto again = p.sweep(p.dsn);
  INFO(again.output);
  CHECK(again.exit_code == 1);
  CHECK(p.psql("SELECT state FROM jobs WHERE id = " + id) == "failed");
  CHECK(again.output.find("failed: eval job " + id + ": gave up after 3 attempts") != std::string::npos);
}

TEST_CASE("bisect names a job that failed outside its own workers and exits 1: an end given up when claimed") {
  Project p;
  p.make_small();
  auto first = p.sweep(p.dsn);
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  auto end = [&p](const char* order) {
    return p.psql("SELECT j.id || ' ' || c.sha FROM jobs j JOIN commits c ON c.sha = j.payload->>'sha' "
                  "WHERE j.kind = 'eval' ORDER BY c.committed_at " + std::string(order) + " LIMIT 1");
  };
  auto good = common::split(end("ASC"), ' '), bad = common::split(end("DESC"), ' ');
  REQUIRE(good.size() == 2);
  REQUIRE(bad.size() == 2);
  REQUIRE(good[1] != bad[1]);
  // The later end's evaluation: its worker on another machine died during
  // the last attempt. Bisect's own workers give it up when they claim it.
  p.psql("UPDATE jobs SET state = 'running', attempts = max_attempts, lease_owner = 'elsewhere:1:0', "
         "lease_expires_at = now() - interval '1 minute' WHERE id = " + bad[0]);
  auto b = p.run({"bisect", "--config", p.config, "--good", good[1], "--bad", bad[1]});
  INFO(b.output);
  CHECK(b.exit_code == 1);
  CHECK(p.psql("SELECT state FROM jobs WHERE id = " + bad[0]) == "failed");
  CHECK(b.output.find("failed: eval job " + bad[0] + ": gave up after 3 attempts") != std::string::npos);
}

TEST_CASE("a worker whose data directory or compile cache is a file is refused at its start, in one line") {
  testing::TempDir dir;
  std::ofstream(dir / "file") << "not a directory";
  std::filesystem::create_directories(dir / "data");
  std::ofstream(dir / "data" / "cache") << "not a directory either";
  // Refused before the database is asked: no job is claimed to fail.
  const std::string nowhere = "host=" + (dir / "no-server").string() + " dbname=none";
  auto file = run_driftwatch({"--data-dir=" + (dir / "file").string(), "worker", "--db", nowhere, "--idle-exit", "0"});
  CHECK(file.exit_code == 2);
  CHECK(common::last_line(file.output) ==
        "driftwatch: the data directory " + (dir / "file").string() + " exists and is not a directory");
  auto cache = run_driftwatch({"--data-dir=" + (dir / "data").string(), "worker", "--db", nowhere, "--idle-exit", "0"});
  CHECK(cache.exit_code == 2);
  CHECK(common::last_line(cache.output) ==
        "driftwatch: the compile cache " + (dir / "data" / "cache").string() + " exists and is not a directory");
}
