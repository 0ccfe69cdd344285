// The job queue's own cost, with no real work: per job, a claim (FOR UPDATE
// SKIP LOCKED, lease in the database's clock), a lease renewal and the
// finishing transaction, on an embedded PostgreSQL (durable, fsync on); then
// claims per second with 8 workers on their own connections.
// Usage: queue_bench [JOBS=2000] [WORKERS=8]
#include <fmt/core.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "bench/positional_args.h"
#include "db/embedded.h"
#include "db/jobs.h"

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

void enqueue(db::Database& d, const std::string& project, int n) {
  std::vector<db::JobSpec> specs;
  for (int i = 0; i < n; ++i) specs.push_back({"noop", project + ":" + std::to_string(i), "{}", 0, -1, 3});
  auto sweep = db::begin_sweep(d, project);
  db::enqueue_jobs(d, project, sweep, specs);
}

/// Claims, renews and finishes until the project's queue is empty; returns jobs done.
int drain(const db::Target& t, const std::string& project, const std::string& owner) {
  auto d = db::Database::connect(t).take();
  int n = 0;
  while (auto job = db::claim_job(d, project, owner, {}, 120)) {
    db::renew_lease(d, job->id, owner, 120);
    db::finish_job(d, {job->id, owner, "{}"}, db::kJobDone);
    ++n;
  }
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  constexpr const char* kUsage = "queue_bench [JOBS=2000] [WORKERS=8]";
  int jobs = bench::positive_arg(argc, argv, 1, 2000, kUsage);
  int workers = bench::positive_arg(argc, argv, 2, 8, kUsage);
  std::string tmpl = "/tmp/dwqueue-XXXXXX";
  if (!mkdtemp(tmpl.data())) return 1;
  std::filesystem::permissions(tmpl, std::filesystem::perms(0755));
  db::EmbeddedCluster cluster(std::filesystem::path(tmpl) / "postgres");
  cluster.start();
  auto d = db::Database::connect(cluster.target()).take();
  d.migrate();

  enqueue(d, "one", jobs);
  auto t0 = Clock::now();
  int done = drain(cluster.target(), "one", "bench:1:0");
  double one = since(t0);

  enqueue(d, "many", jobs);
  std::atomic<int> total{0};
  std::vector<std::thread> threads;
  t0 = Clock::now();
  for (int w = 0; w < workers; ++w)
    threads.emplace_back([&, w] { total += drain(cluster.target(), "many", "bench:1:" + std::to_string(w)); });
  for (auto& t : threads) t.join();
  double many = since(t0);

  fmt::print("| figure | value |\n|---|---|\n");
  fmt::print("| queue overhead per job, 1 worker (claim + renew + finish, {} jobs) | {:.2f} ms |\n", done,
             1000 * one / done);
  fmt::print("| claims per second, 1 worker | {:.0f} |\n", done / one);
  fmt::print("| claims per second, {} workers ({} jobs, {} cores) | {:.0f} |\n", workers, total.load(),
             std::thread::hardware_concurrency(), total / many);
  cluster.stop();
  std::filesystem::remove_all(tmpl);
}
