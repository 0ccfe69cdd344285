// Figures for the database layer, printed as a table:
//  1. rows/s storing measurements through COPY vs one INSERT per row, side by
//     side in one run (alternating, median of repeats);
//  2. time from nothing to an embedded database that accepts connections
//     (initdb + start + CREATE DATABASE), and a warm start of an existing one.
// Usage: db_bench [ROWS=100000] [REPEATS=3]
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>

#include "bench/positional_args.h"
#include "db/embedded.h"
#include "db/store.h"

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::filesystem::path scratch_dir() {
  std::string tmpl = "/tmp/dwbench-XXXXXX";
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  std::filesystem::permissions(tmpl, std::filesystem::perms(0755));
  return tmpl;
}

}  // namespace

int main(int argc, char** argv) {
  constexpr const char* kUsage = "db_bench [ROWS=100000] [REPEATS=3]";
  int rows_wanted = bench::positive_arg(argc, argv, 1, 100000, kUsage);
  int repeats = bench::positive_arg(argc, argv, 2, 3, kUsage);
  auto dir = scratch_dir();
  // Durable, like the user's embedded database (fsync on).
  db::EmbeddedCluster cluster(dir / "postgres");

  auto t0 = Clock::now();
  cluster.start();
  double cold = since(t0);
  cluster.stop();
  t0 = Clock::now();
  cluster.start();
  double warm = since(t0);

  auto database = db::Database::connect(cluster.target()).take();
  database.migrate();
  auto repo = db::upsert_repository(database, "/bench");
  auto commit = db::upsert_commit(database, repo, {"c0", {}, "bench", 0, "bench"});
  auto recipe = db::upsert_recipe(database, "bench", "h", "");
  auto build = db::record_build(database, {commit, recipe, "ok", 0, "", "", ""});
  auto policy = db::upsert_policy(database, "bench", "p", "c0", "{}");
  // 4 metrics x 2 heuristics per module, as an evaluation stores them.
  int modules = std::max(1, rows_wanted / 8);
  std::vector<db::BenchmarkRow> benches;
  for (int i = 0; i < modules; ++i) benches.push_back({"module" + std::to_string(i), "h", "c"});
  std::vector<db::Id> ids;
  auto suite = db::upsert_suite(database, "bench", "m", "{}", benches, &ids);
  auto eval = db::begin_evaluation(database, build, policy, suite);
  std::vector<db::MeasurementRow> rows;
  for (auto id : ids)
    for (const char* h : {"default", "learned"})
      for (const char* m : {"text_bytes", "code_bytes", "compile_seconds", "decisions"})
        rows.push_back({id, h, m, 12345.678 + id});

  std::vector<double> copy_rate, insert_rate;
  for (int r = 0; r < repeats; ++r) {
    t0 = Clock::now();
    db::replace_measurements(database, eval, rows);
    copy_rate.push_back(rows.size() / since(t0));
    t0 = Clock::now();
    db::replace_measurements_row_by_row(database, eval, rows);
    insert_rate.push_back(rows.size() / since(t0));
  }
  if (db::count_measurements(database, eval) != static_cast<int64_t>(rows.size())) {
    fmt::print(stderr, "row count mismatch\n");
    return 1;
  }
  cluster.stop();
  std::filesystem::remove_all(dir);

  fmt::print("driftwatch db_bench: {} measurement rows, median of {} alternating repeats\n\n", rows.size(), repeats);
  fmt::print("| what | figure |\n|---|---|\n");
  fmt::print("| COPY (stream_to) | {:.0f} rows/s |\n", median(copy_rate));
  fmt::print("| one INSERT per row (prepared, one transaction) | {:.0f} rows/s |\n", median(insert_rate));
  fmt::print("| COPY speed-up | {:.1f}x |\n", median(copy_rate) / median(insert_rate));
  fmt::print("| embedded database from nothing to accepting connections | {:.2f} s |\n", cold);
  fmt::print("| embedded database warm start (existing cluster) | {:.2f} s |\n", warm);
  return 0;
}
