// Cost of change-point detection (Google Benchmark), on synthetic series:
//  - 1,000 check-ins: deterministic steps, and E-Divisive over 3 noisy
//    samples per check-in, with three steps and without any;
//  - a year of daily check-ins x 500 modules: deterministic steps over every
//    module's ratio series and the suite's, and E-Divisive on the suite's
//    (noisy, as compile time is).
// Usage: drift_bench [google-benchmark flags]
#include <benchmark/benchmark.h>

#include <random>

#include "reports/change_points.h"

namespace {

// Levels stepping at the given quarters of the series, gaussian noise.
std::vector<std::vector<double>> noisy_series(std::size_t points, std::size_t repeats, bool with_steps) {
  std::mt19937_64 rng(1);
  std::normal_distribution<double> noise(0, 1);
  std::vector<std::vector<double>> series(points);
  for (std::size_t i = 0; i < points; ++i) {
    double level = with_steps ? (i >= points / 4) * 2.0 - (i >= points / 2) * 1.0 + (i >= 3 * points / 4) * 3.0 : 0;
    for (std::size_t r = 0; r < repeats; ++r) series[i].push_back(100 + level + noise(rng));
  }
  return series;
}

// Size ratios of `modules` modules over `checkins` check-ins: each module's
// ratio moves at a handful of check-ins, as sizes do.
std::vector<std::vector<double>> module_ratios(std::size_t checkins, std::size_t modules) {
  std::mt19937_64 rng(2);
  std::vector<std::vector<double>> ratios(modules, std::vector<double>(checkins));
  for (auto& series : ratios) {
    double ratio = 0.9 + double(rng() % 200) / 1000;
    for (auto& r : series) {
      if (rng() % 50 == 0) ratio += (double(rng() % 100) - 50) / 1000;
      r = ratio;
    }
  }
  return ratios;
}

void BM_Steps1000(benchmark::State& state) {
  std::vector<double> values;
  for (const auto& point : noisy_series(1000, 1, true)) values.push_back(point[0]);
  for (auto _ : state) benchmark::DoNotOptimize(reports::deterministic_steps(values, 0.5).take());
}
BENCHMARK(BM_Steps1000)->Unit(benchmark::kMicrosecond);

void BM_EDivisive1000Steps(benchmark::State& state) {
  auto series = noisy_series(1000, 3, true);
  std::size_t found = 0;
  for (auto _ : state) found = reports::e_divisive(series, {}).take().size();
  state.counters["changes"] = double(found);
}
BENCHMARK(BM_EDivisive1000Steps)->Unit(benchmark::kMillisecond);

void BM_EDivisive1000Flat(benchmark::State& state) {
  auto series = noisy_series(1000, 3, false);
  std::size_t found = 0;
  for (auto _ : state) found = reports::e_divisive(series, {}).take().size();
  state.counters["changes"] = double(found);
}
BENCHMARK(BM_EDivisive1000Flat)->Unit(benchmark::kMillisecond);

void BM_YearOf500ModulesSteps(benchmark::State& state) {
  auto ratios = module_ratios(365, 500);
  std::vector<double> suite(365, 0);
  for (const auto& series : ratios)
    for (std::size_t i = 0; i < suite.size(); ++i) suite[i] += series[i] / double(ratios.size());
  std::size_t found = 0;
  for (auto _ : state) {
    found = reports::deterministic_steps(suite, 0).take().size();
    for (const auto& series : ratios) found += reports::deterministic_steps(series, 0.001).take().size();
  }
  state.counters["changes"] = double(found);
}
BENCHMARK(BM_YearOf500ModulesSteps)->Unit(benchmark::kMillisecond);

void BM_YearSuiteEDivisive(benchmark::State& state) {
  auto series = noisy_series(365, 3, true);
  std::size_t found = 0;
  for (auto _ : state) found = reports::e_divisive(series, {}).take().size();
  state.counters["changes"] = double(found);
}
BENCHMARK(BM_YearSuiteEDivisive)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
