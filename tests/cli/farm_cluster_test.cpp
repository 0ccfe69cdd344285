// The farm's shared services, for real on this machine: a single-node Slurm
// (munge, slurmctld, slurmd started by the test as root in a temporary
// directory) running a sweep's workers as a job array; a redis-server on
// 127.0.0.1 as ccache's remote storage; a shared artifact cache.
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <map>
#include <thread>

#include "common/text.h"
#include "tests/support/sweep_project.h"

using testing::Project;
using testing::run_driftwatch;

namespace {

int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

common::ProcessResult run(std::vector<std::string> argv, std::vector<std::pair<std::string, std::string>> env = {},
                          std::chrono::seconds timeout = std::chrono::seconds(60)) {
  common::ProcessSpec p;
  p.argv = std::move(argv);
  p.env = std::move(env);
  p.timeout = timeout;
  auto r = common::run_process(p);
  if (!r) {
    common::ProcessResult failed;
    failed.output = r.error().message;
    return failed;
  }
  return *r;
}

common::Child start(std::vector<std::string> argv, std::vector<std::pair<std::string, std::string>> env = {},
                    std::optional<std::filesystem::path> log = std::nullopt) {
  common::ProcessSpec p;
  p.argv = std::move(argv);
  p.env = std::move(env);
  p.log_file = log;
  return common::Child::start(p).take();
}

std::string read(const std::filesystem::path& f) {
  std::ifstream in(f);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

/// munged, slurmctld and slurmd for this machine's one node, torn down with the object.
struct SlurmCluster {
  testing::TempDir dir;
  std::string conf, host, why_not;
  std::vector<common::Child> daemons;

  SlurmCluster() {
    auto d = dir.path();
    std::filesystem::create_directories(d / "state");
    std::filesystem::create_directories(d / "spool");
    auto key = run({"mungekey", "-c", "-k", (d / "munge.key").string()});
    if (!key.ok()) {
      why_not = "mungekey: " + key.output;
      return;
    }
    daemons.push_back(start({"munged", "-F", "-f", "-S", (d / "munge.sock").string(), "--key-file=" + (d / "munge.key").string(),
                             "--log-file=" + (d / "munged.log").string(), "--pid-file=" + (d / "munged.pid").string(),
                             "--seed-file=" + (d / "munged.seed").string()},
                            {}, d / "munged.out"));
    // The node as slurmd sees it: this machine's real hostname and CPUs.
    auto node = run({"slurmd", "-C"});
    auto line = common::split(node.output, '\n').empty() ? "" : common::trim(common::split(node.output, '\n')[0]);
    if (!node.ok() || line.rfind("NodeName=", 0) != 0) {
      why_not = "slurmd -C: " + node.output;
      return;
    }
    host = common::split(line.substr(9), ' ')[0];
    conf = (d / "slurm.conf").string();
    std::ofstream(conf) << "ClusterName=dwtest\nSlurmctldHost=" << host
                        << "\nSlurmUser=root\nSlurmdUser=root\nAuthType=auth/munge\nCredType=cred/munge\n"
                        << "AuthInfo=socket=" << (d / "munge.sock").string()
                        << "\nMpiDefault=none\nProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nReturnToService=2\n"
                        << "SlurmctldPidFile=" << (d / "slurmctld.pid").string() << "\nSlurmdPidFile="
                        << (d / "slurmd.pid").string() << "\nSlurmdSpoolDir=" << (d / "spool").string()
                        << "\nStateSaveLocation=" << (d / "state").string() << "\nSlurmctldPort=" << free_port()
                        << "\nSlurmdPort=" << free_port()
                        << "\nSchedulerType=sched/backfill\nSelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n"
                        << "JobCompType=jobcomp/none\nAccountingStorageType=accounting_storage/none\n"
                        << "JobAcctGatherType=jobacct_gather/none\nSlurmctldLogFile=" << (d / "slurmctld.log").string()
                        << "\nSlurmdLogFile=" << (d / "slurmd.log").string() << "\n"
                        << line << " State=UNKNOWN\nPartitionName=farm Nodes=" << host
                        << " Default=YES MaxTime=INFINITE State=UP\n";
    daemons.push_back(start({"slurmctld", "-D", "-i"}, env(), d / "slurmctld.out"));
    daemons.push_back(start({"slurmd", "-D"}, env(), d / "slurmd.out"));
    // 30 s of wall time, however long each sinfo takes to answer.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      if (daemons[1].try_wait()) {
        why_not = "slurmctld exited: " + read(d / "slurmctld.out") + read(d / "slurmctld.log");
        return;
      }
      // No cgroup hierarchy (a chroot), say: the node would never come up.
      if (daemons[2].try_wait()) {
        why_not = "slurmd exited before registering: " + read(d / "slurmd.out") + read(d / "slurmd.log");
        return;
      }
      auto s = run({"sinfo", "-h", "-o", "%T"}, env(), std::chrono::seconds(10));
      if (s.ok() && common::trim(s.output) == "idle") {
        // slurmctld reports the node idle from its registration; a slurmd that
        // died since (no cgroup hierarchy, say) would never start a task.
        std::this_thread::sleep_for(std::chrono::seconds(1));
        if (daemons[2].try_wait()) why_not = "slurmd exited after registering: " + read(d / "slurmd.log");
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    why_not = "the node did not become idle within 30 s: " + read(d / "slurmctld.log") + read(d / "slurmd.log");
  }
  std::vector<std::pair<std::string, std::string>> env() const { return {{"SLURM_CONF", conf}}; }
};

/// Whether a test can go on with this cluster: skipped only where slurmctld
/// cannot start at all (no root, no munge); any other fault fails it.
bool started(SlurmCluster& slurm) {
  if (slurm.why_not.empty()) return true;
  if (slurm.daemons.size() < 2 || slurm.daemons[1].try_wait()) {
    testing::skip_test("slurmctld cannot start here: " + common::trim(slurm.why_not).substr(0, 400));
    return false;
  }
  FAIL(slurm.why_not);
  return false;
}

}  // namespace

TEST_CASE("sweep --engine slurm runs its workers as a job array on a real single-node Slurm") {
  SlurmCluster slurm;
  if (!started(slurm)) return;
  Project p;
  p.use_prebuilt_toolchains(DWCC_BIN);
  // slurmctld timing out on the sweep's first two polls, as it does under
  // load: the real squeue behind a wrapper that fails twice first. The first
  // array is submitted held and released by the third poll, so those two
  // failures happen while it waits, however fast its tasks would have
  // finished; one submitted later (work left after the first) is not held.
  auto wrappers = p.dir / "bin";
  auto polls = (p.dir / "polls").string(), array = (p.dir / "array").string();
  std::filesystem::create_directories(wrappers);
  std::ofstream(wrappers / "sbatch") << "#!/bin/sh\nif [ -e " << array << " ]; then exec /usr/bin/sbatch \"$@\"; fi\n"
                                     << "id=$(/usr/bin/sbatch --hold \"$@\") || exit $?\necho \"$id\" > " << array
                                     << "\necho \"$id\"\n";
  std::ofstream(wrappers / "squeue") << "#!/bin/sh\nn=$(cat " << polls << " 2>/dev/null || echo 0)\n"
                                     << "echo $((n + 1)) > " << polls << "\n"
                                     << "if [ \"$n\" -lt 2 ]; then echo 'squeue: error: Socket timed out on send/recv "
                                        "operation' >&2; exit 1; fi\n"
                                     << "if [ \"$n\" -eq 2 ]; then scontrol release \"$(cat " << array
                                     << ")\" || exit 1; fi\nexec /usr/bin/squeue \"$@\"\n";
  for (const char* w : {"sbatch", "squeue"})
    std::filesystem::permissions(wrappers / w, std::filesystem::perms::owner_all);
  auto env = slurm.env();
  env.emplace_back("PATH", wrappers.string() + ":" + std::getenv("PATH"));
  // Outputs of earlier nights' tasks: the one past kWorkerLogDays goes, the
  // recent one and a file of someone else's stay.
  auto logs = p.dir / "data" / "slurm" / "toy";
  std::filesystem::create_directories(logs);
  auto past = std::filesystem::file_time_type::clock::now() - std::chrono::hours(24 * 31);
  for (const char* name : {"worker-7_0.out", "worker-8_0.out", "notes.out"}) std::ofstream(logs / name) << "earlier\n";
  std::filesystem::last_write_time(logs / "worker-7_0.out", past);
  std::filesystem::last_write_time(logs / "notes.out", past);
  std::filesystem::last_write_time(logs / "worker-8_0.out",
                                   std::filesystem::file_time_type::clock::now() - std::chrono::hours(24 * 29));
  // A Slurm that cannot run its tasks fails the sweep in 2 minutes, not never.
  auto r = run_driftwatch(p.args({"sweep", "--config", p.config, "--engine", "slurm", "--partition", "farm",
                                  "--workers", "2", "-j", "1", "--stall-timeout", "120"},
                                 p.dsn),
                          env);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("squeue failed (asked again at the next poll): ") != std::string::npos);
  CHECK(r.output.find("Socket timed out") != std::string::npos);
  CHECK(r.output.find("submitted 2 worker(s) as Slurm array") != std::string::npos);
  CHECK(r.output.find("on partition farm") != std::string::npos);
  CHECK(p.psql("SELECT count(*) FROM jobs WHERE state <> 'done'") == "0");
  CHECK(p.psql("SELECT string_agg(n::text, ',') FROM (SELECT count(*) AS n FROM module_results GROUP BY evaluation_id) t") ==
        "10,10");
  CHECK_FALSE(std::filesystem::exists(logs / "worker-7_0.out"));
  CHECK(std::filesystem::exists(logs / "worker-8_0.out"));
  CHECK(std::filesystem::exists(logs / "notes.out"));
  // The array's tasks did the work: their output is kept, one file per task.
  int outputs = 0;
  std::string task_output;
  for (const auto& e : std::filesystem::directory_iterator(logs))
    if (e.path().extension() == ".out" && e.path().filename() != "worker-8_0.out" &&
        e.path().filename() != "notes.out") {
      ++outputs;
      task_output += read(e.path());
    }
  CHECK(outputs == 2);
  INFO(task_output);
  CHECK(task_output.find("claiming build,eval jobs of project toy") != std::string::npos);
  CHECK(task_output.find(" done") != std::string::npos);
  // Not one job ran in the sweep's own process: every lease was a task's.
  CHECK(r.output.find("build ok") == std::string::npos);
}

TEST_CASE("sweep --engine slurm bisects after its first array left on idle: a new array, not 'ended without a job'") {
  SlurmCluster slurm;
  if (!started(slurm)) return;
  Project p;
  p.make_small();
  p.set("bisect = false", "bisect = true");
  // Workers that leave as soon as nothing is runnable: the first array is
  // gone before bisection plans its steps, as one left on idle (30 s) is
  // after a long analysis.
  auto wrappers = p.dir / "bin";
  std::filesystem::create_directories(wrappers);
  std::ofstream(wrappers / "sbatch") << "#!/bin/sh\nfor a; do script=$a; done\n"
                                     << "sed -i 's/--idle-exit [0-9.]*/--idle-exit 0/' \"$script\"\n"
                                     << "exec /usr/bin/sbatch \"$@\"\n";
  std::filesystem::permissions(wrappers / "sbatch", std::filesystem::perms::owner_all);
  auto env = slurm.env();
  env.emplace_back("PATH", wrappers.string() + ":" + std::getenv("PATH"));
  auto r = run_driftwatch(p.args({"sweep", "--config", p.config, "--engine", "slurm", "--workers", "1", "-j", "2",
                                  "--stall-timeout", "300"},
                                 p.dsn),
                          env);
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("ended without finishing a job") == std::string::npos);
  // Bisection measured check-ins between the two samples, on later arrays.
  CHECK(std::stoi(p.psql("SELECT count(*) FROM evaluations WHERE status = 'done'")) > 2);
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE culprit_commit_id IS NOT NULL") != "0");
}

TEST_CASE("sweep --engine slurm waits for a job another worker holds, not 'ended without a job', and its tasks get libpq's environment") {
  SlurmCluster slurm;
  if (!started(slurm)) return;
  Project p;
  p.use_prebuilt_toolchains(DWCC_BIN);
  // Before the first array starts, a worker elsewhere (another project's
  // sweep sharing the job, a task of an earlier array) holds the last
  // evaluation for 25 s. The array's tasks do the rest and leave on idle;
  // the sweep once failed then, with the job still running elsewhere.
  auto wrappers = p.dir / "bin";
  auto marked = (p.dir / "marked").string();
  std::filesystem::create_directories(wrappers);
  std::ofstream(wrappers / "sbatch")
      << "#!/bin/sh\nfor a; do script=$a; done\n"
      << "sed -i 's/--idle-exit [0-9.]*/--idle-exit 0/' \"$script\"\n"
      << "if [ ! -e " << marked << " ]; then touch " << marked << "; psql -X -q " << common::shell_quote(p.dsn)
      << " -c \"UPDATE jobs SET state = 'running', lease_owner = 'elsewhere:1:0', attempts = 1, "
         "lease_expires_at = now() + interval '25 seconds' WHERE id = (SELECT max(id) FROM jobs WHERE kind = 'eval')\" "
         "|| exit 1; fi\n"
      << "env | grep '^PG' > " << (p.dir / "sbatch-env").string() << "\n"
      << "cp \"$script\" " << (p.dir / "submitted.sh").string() << "\n"
      << "exec /usr/bin/sbatch \"$@\"\n";
  std::filesystem::permissions(wrappers / "sbatch", std::filesystem::perms::owner_all);
  auto env = slurm.env();
  env.emplace_back("PATH", wrappers.string() + ":" + std::getenv("PATH"));
  // What the sweep's libpq takes from the environment, its tasks need too
  // (sbatch hands its environment on); other children never see it.
  env.emplace_back("PGCONNECT_TIMEOUT", "17");
  auto r = run_driftwatch(p.args({"sweep", "--config", p.config, "--engine", "slurm", "--workers", "1", "-j", "1",
                                  "--stall-timeout", "300"},
                                 p.dsn),
                          env);
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("waiting for 1 job(s) other workers hold") != std::string::npos);
  CHECK(r.output.find("ended without finishing a job") == std::string::npos);
  // The job whose holder's lease lapsed was taken over by a later array.
  CHECK(p.psql("SELECT count(*) FROM jobs WHERE state <> 'done'") == "0");
  CHECK(p.psql("SELECT count(*) FROM evaluations WHERE status = 'done'") == "2");
  CHECK(read(p.dir / "sbatch-env") == "PGCONNECT_TIMEOUT=17\n");
  // The script file, readable on the cluster's shared disk, holds no part of
  // the DSN (the tasks get it from sbatch's environment), and the project's
  // retry backoff (1 s in these tests) reaches the tasks' workers.
  auto script = read(p.dir / "submitted.sh");
  INFO(script);
  CHECK(script.find(" worker --project ") != std::string::npos);
  CHECK(script.find("dbname") == std::string::npos);
  CHECK(script.find(p.dsn.substr(p.dsn.rfind('=') + 1)) == std::string::npos);
  CHECK(script.find("--retry-backoff 1\n") != std::string::npos);
}

TEST_CASE(
    "sweep --engine slurm stopped by SIGTERM cancels its array, and the next sweep marks it interrupted and does "
    "the work") {
  SlurmCluster slurm;
  if (!started(slurm)) return;
  Project p;
  p.use_prebuilt_toolchains(DWCC_BIN);
  // Each compile of the nightlies takes 2 s more while `slow` exists: the
  // array is at work when the sweep is stopped, and would go on for a minute
  // unwatched. (A flag outside the toolchains, so the next sweep's compiles
  // are quick and the toolchains' files the same.)
  auto slow = p.dir / "slow";
  std::ofstream(slow) << "on\n";
  for (const char* date : {"2026-01-05", "2026-01-12"}) {
    auto bin = p.dir / (std::string("nightly-") + date) / "bin";
    std::filesystem::rename(bin / "dwcc", bin / "dwcc.real");
    std::ofstream(bin / "dwcc") << "#!/bin/sh\nif [ -e " << slow.string()
                                << " ]; then sleep 2; fi\nexec \"$(dirname \"$0\")/dwcc.real\" \"$@\"\n";
    std::filesystem::permissions(bin / "dwcc", std::filesystem::perms::owner_all);
  }
  auto argv = p.args({"sweep", "--config", p.config, "--engine", "slurm", "--workers", "1", "-j", "1"}, p.dsn);
  argv.insert(argv.begin(), DRIFTWATCH_BIN);
  auto log = p.dir / "sweep.log";
  auto sweep = start(argv, slurm.env(), log);
  std::string array;
  for (int i = 0; i < 600 && array.empty(); ++i) {  // a minute at most
    auto text = read(log);
    auto at = text.find("as Slurm array ");
    if (at != std::string::npos && p.psql("SELECT count(*) FROM jobs WHERE state = 'running'") != "0")
      array = common::split(text.substr(at + 15), ' ')[0];
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  REQUIRE_MESSAGE(!array.empty(), read(log));
  kill(sweep.pid(), SIGTERM);
  auto stopped = sweep.wait();
  auto said = read(log);
  INFO(said);
  CHECK(stopped.signal == SIGTERM);
  CHECK(said.find("sweep stopped by signal 15: Slurm array " + array + " cancelled") != std::string::npos);
  // No task of the array is left, within the time scancel takes.
  std::string left = "?";
  for (int i = 0; i < 100 && !left.empty(); ++i) {
    left = common::trim(run({"squeue", "-h", "-j", array, "-o", "%i %T"}, slurm.env()).output);
    if (left.find("Invalid job id") != std::string::npos) left.clear();
    if (!left.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  CHECK(left == "");
  // The next sweep takes the rest; the stopped one reads as interrupted, not running for ever.
  std::filesystem::remove(slow);
  auto again = run_driftwatch(
      p.args({"sweep", "--config", p.config, "--engine", "slurm", "--workers", "1", "-j", "1"}, p.dsn), slurm.env());
  INFO(again.output);
  CHECK(again.exit_code == 0);
  CHECK(p.psql("SELECT count(*) FROM jobs WHERE state <> 'done'") == "0");
  CHECK(p.psql("SELECT string_agg(state, ',' ORDER BY id) FROM sweeps") == "interrupted,done");
}

TEST_CASE("sweep --engine slurm whose tasks cannot run driftwatch quotes what a task said") {
  SlurmCluster slurm;
  if (!started(slurm)) return;
  Project p;
  p.use_prebuilt_toolchains(DWCC_BIN);
  // The nodes lack the binary at the sweep's path (not on the shared disk).
  auto wrappers = p.dir / "bin";
  std::filesystem::create_directories(wrappers);
  std::ofstream(wrappers / "sbatch") << "#!/bin/sh\nfor a; do script=$a; done\nsed -i 's|" << DRIFTWATCH_BIN
                                     << "|/nowhere/driftwatch|' \"$script\"\nexec /usr/bin/sbatch \"$@\"\n";
  std::filesystem::permissions(wrappers / "sbatch", std::filesystem::perms::owner_all);
  auto env = slurm.env();
  env.emplace_back("PATH", wrappers.string() + ":" + std::getenv("PATH"));
  auto r = run_driftwatch(
      p.args({"sweep", "--config", p.config, "--engine", "slurm", "--workers", "1", "--stall-timeout", "120"}, p.dsn),
      env);
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("ended without finishing a job (a task's last line: ") != std::string::npos);
  CHECK(r.output.find("/nowhere/driftwatch") != std::string::npos);
  CHECK(p.psql("SELECT count(*) FROM jobs WHERE state = 'queued'") == p.psql("SELECT count(*) FROM jobs"));
}

TEST_CASE("sweep --engine slurm gives up on an array that cannot start, says why, and loses no job") {
  SlurmCluster slurm;
  if (!started(slurm)) return;
  Project p;
  p.use_prebuilt_toolchains(DWCC_BIN);
  auto drain =
      run({"scontrol", "update", "NodeName=" + slurm.host, "State=DRAIN", "Reason=driftwatch-test"}, slurm.env());
  REQUIRE_MESSAGE(drain.ok(), drain.output);
  auto sweep = p.args(
      {"sweep", "--config", p.config, "--engine", "slurm", "--workers", "2", "-j", "1", "--stall-timeout", "5"}, p.dsn);
  auto r = run_driftwatch(sweep, slurm.env());
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("no job of Slurm array") != std::string::npos);
  CHECK(r.output.find("has run for 5 s (pending: ") != std::string::npos);
  // The array is cancelled, and every job is still there for the next sweep.
  auto left = run({"squeue", "-h", "-o", "%i|%T"}, slurm.env());
  CHECK(common::trim(left.output) == "");
  CHECK(p.psql("SELECT count(*) FROM jobs WHERE state = 'queued'") == p.psql("SELECT count(*) FROM jobs"));
  CHECK(p.psql("SELECT count(*) FROM jobs") != "0");

  // The node back: the next sweep finishes the same jobs. Slurm takes a
  // moment to lift the drain (the node is idle again in sinfo), and a sweep
  // that starts before that waits on a pending array: given a minute, not 5 s.
  REQUIRE(run({"scontrol", "update", "NodeName=" + slurm.host, "State=RESUME"}, slurm.env()).ok());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline &&
         common::trim(run({"sinfo", "-h", "-o", "%T"}, slurm.env(), std::chrono::seconds(10)).output) != "idle")
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  sweep.back() = "60";
  auto again = run_driftwatch(sweep, slurm.env());
  INFO(again.output);
  CHECK(again.exit_code == 0);
  CHECK(p.psql("SELECT count(*) FROM jobs WHERE state <> 'done'") == "0");
}

TEST_CASE("two builds of one check-in at once in a shared data directory build it once, and a clean work tree elsewhere is served from the remote ccache") {
  Project p;
  testing::TempDir cache;
  int port = free_port();
  auto redis = start({"redis-server", "--port", std::to_string(port), "--bind", "127.0.0.1", "--save", "",
                      "--appendonly", "no", "--dir", cache.path().string()},
                     {}, cache / "redis.log");
  bool up = false;
  for (int i = 0; i < 100 && !up; ++i) {
    up = common::trim(run({"redis-cli", "-p", std::to_string(port), "ping"}).output) == "PONG";
    if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  REQUIRE_MESSAGE(up, (std::string("redis-server did not start: ") + read(cache / "redis.log")));
  // The shipped recipe, naming the farm's remote compile cache.
  auto text = read(std::string(DRIFTWATCH_SOURCE_DIR) + "/samples/recipes/sample-compiler.toml");
  auto at = text.find("launcher = \"ccache\"\n");
  REQUIRE(at != std::string::npos);
  text.insert(at, "ccache_remote_storage = \"redis://127.0.0.1:" + std::to_string(port) + "\"\n");
  auto recipe = (cache / "recipe.toml").string();
  std::ofstream(recipe) << text;
  // Each machine its own local ccache; paths under the temporary root compare equal.
  auto env_for = [&](const std::string& name) {
    return std::vector<std::pair<std::string, std::string>>{{"CCACHE_DIR", (cache / name).string()},
                                                            {"CCACHE_BASEDIR", p.dir.path().string()}};
  };
  auto build = [&](const std::string& data, const std::string& ccache) {
    common::ProcessSpec s;
    s.argv = {DRIFTWATCH_BIN, "--data-dir", (p.dir / data).string(), "--db", p.dsn, "build", "--repo", p.repo,
              "--recipe", recipe, "--commit", "main", "-j", "2"};
    s.env = env_for(ccache);
    return common::Child::start(s).take();
  };
  auto stats = [&](const std::string& ccache) {
    std::map<std::string, long> out;
    auto r = run({"ccache", "--print-stats"}, env_for(ccache));
    for (const auto& line : common::split(r.output, '\n')) {
      auto f = common::split(line, '\t');
      if (f.size() == 2) out[f[0]] = std::stol(f[1]);
    }
    return out;
  };

  // Two workers on one shared data directory, the same check-in, at once: one builds, the other waits and is served.
  auto first = build("shared", "ccache-a");
  auto second = build("shared", "ccache-a");
  auto r1 = first.wait(), r2 = second.wait();
  INFO(r1.output);
  INFO(r2.output);
  REQUIRE(r1.exit_code == 0);
  REQUIRE(r2.exit_code == 0);
  int cached = (r1.output.find("(cached)") != std::string::npos) + (r2.output.find("(cached)") != std::string::npos);
  CHECK(cached == 1);
  int configured = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(p.dir / "shared"))
    if (e.path().filename() == "build.log") configured += read(e.path()).find("$ cmake ") != std::string::npos;
  CHECK(configured == 1);
  auto a = stats("ccache-a");
  CHECK(a["remote_storage_miss"] > 0);

  // Another machine: a clean work tree and an empty local cache, the same check-in: compiled from the remote cache.
  auto other = build("elsewhere", "ccache-b");
  auto r3 = other.wait();
  INFO(r3.output);
  REQUIRE(r3.exit_code == 0);
  CHECK(r3.output.find("(cached)") == std::string::npos);
  auto b = stats("ccache-b");
  CHECK(b["remote_storage_hit"] > 0);
  CHECK(b["remote_storage_hit"] == a["remote_storage_miss"]);
  CHECK(b["cache_miss"] == 0);
  MESSAGE((std::string("remote ccache: ") + std::to_string(b["remote_storage_hit"]) + " hits, " +
           std::to_string(b["remote_storage_miss"]) + " misses"));
  redis.kill_group();
}
