// Decision cost of the learned heuristic (Google Benchmark):
//  - BM_TorchScore: one forward pass of the LibTorch MLP, single thread;
//  - BM_PolicyAdvise: what the runner does per decision (bind, normalize, forward);
//  - BM_ChannelRoundTrip: one decision through LLVM's protocol over real FIFOs,
//    with a thread playing the compiler's side (header once, then per decision
//    an observation of 38 int64 features and a read of the 8-byte answer).
// Usage: policy_bench [POLICY_FILE] [google-benchmark flags]
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <thread>

#include "policy/channel_server.h"
#include "policy/model.h"
#include "policy/policy_runner.h"

namespace {

std::string g_policy_file;

policy::PolicyModel load_or_make() {
  if (!g_policy_file.empty()) return policy::PolicyModel::load(g_policy_file).take();
  policy::PolicyMetadata m;
  m.name = "bench";
  for (int i = 0; i < 38; ++i) m.features.push_back("f" + std::to_string(i));
  m.mean.assign(38, 0);
  m.scale.assign(38, 1);
  return policy::PolicyModel::create(m);
}

policy::ChannelHeader header_for(const policy::PolicyMetadata& m) {
  policy::ChannelHeader h;
  for (const auto& f : m.features) h.features.push_back({f, "int64_t", {1}, 0});
  h.advice = {"inlining_decision", "int64_t", {1}, 0};
  return h;
}

void BM_TorchScore(benchmark::State& state) {
  policy::use_one_thread();
  auto model = load_or_make();
  std::vector<float> in(model.metadata().features.size(), 0.3f);
  for (auto _ : state) benchmark::DoNotOptimize(model.score(in.data()));
}
BENCHMARK(BM_TorchScore)->ComputeStatistics("median", [](const std::vector<double>& v) {
  auto c = v;
  std::nth_element(c.begin(), c.begin() + c.size() / 2, c.end());
  return c[c.size() / 2];
});

void BM_PolicyAdvise(benchmark::State& state) {
  policy::use_one_thread();
  auto model = load_or_make();
  auto header = header_for(model.metadata());
  auto runner = policy::make_policy_runner(model);
  if (!runner->begin(header).ok()) state.SkipWithError("begin failed");
  std::vector<std::vector<double>> features(header.features.size(), std::vector<double>{17});
  std::string ctx;
  for (auto _ : state) benchmark::DoNotOptimize(runner->advise({header, features, 0, ctx}));
}
BENCHMARK(BM_PolicyAdvise);

/// LLVM's side of the channel: opens BASE.in to read, BASE.out to write.
void fake_compiler(const std::string& base, const policy::ChannelHeader& h, std::int64_t decisions) {
  int in = open((base + ".in").c_str(), O_RDONLY);
  int out = open((base + ".out").c_str(), O_WRONLY);
  std::string head = "{\"features\":[";
  for (std::size_t i = 0; i < h.features.size(); ++i)
    head += std::string(i ? "," : "") + "{\"name\":\"" + h.features[i].name + "\",\"port\":0,\"shape\":[1],\"type\":\"int64_t\"}";
  head += "],\"advice\":{\"name\":\"inlining_decision\",\"port\":0,\"shape\":[1],\"type\":\"int64_t\"}}\n{\"context\":\"\"}\n";
  (void)!write(out, head.data(), head.size());
  std::string obs(h.observation_bytes(), '\x01');
  for (std::int64_t i = 0; i < decisions; ++i) {
    std::string msg = "{\"observation\":" + std::to_string(i) + "}\n" + obs + "\n";
    (void)!write(out, msg.data(), msg.size());
    std::int64_t answer;
    if (read(in, &answer, sizeof answer) != sizeof answer) break;
  }
  close(out);
  close(in);
}

void BM_ChannelRoundTrip(benchmark::State& state) {
  auto model = load_or_make();
  auto header = header_for(model.metadata());
  auto base = std::filesystem::temp_directory_path() / ("dw-bench-ch-" + std::to_string(getpid()));
  auto fifos = policy::ChannelFifos::create(base).take();
  const std::int64_t n = state.max_iterations;
  std::thread compiler(fake_compiler, base.string(), header, n);
  // The runner answers inside serve_session; the benchmark loop only counts
  // decisions, so the whole session is timed and divided by n.
  auto runner = policy::make_policy_runner(model);
  std::string error;
  auto start = std::chrono::steady_clock::now();
  auto stats = policy::serve_session(fifos, *runner, start + std::chrono::minutes(5), [] { return true; }, error);
  auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  compiler.join();
  for (auto _ : state) state.SetIterationTime(seconds / n);
  if (!error.empty() || stats.decisions != static_cast<std::size_t>(n)) state.SkipWithError("session failed");
}
BENCHMARK(BM_ChannelRoundTrip)->UseManualTime()->Iterations(20000);

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && argv[1][0] != '-') {
    g_policy_file = argv[1];
    for (int i = 1; i + 1 < argc; ++i) argv[i] = argv[i + 1];
    --argc;
  }
  policy::use_one_thread();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
