// Walking and sampling a long first-parent history, timed: a generated
// repository of N commits (default 50,000, one an hour), written once by the
// same replay code as `driftwatch sample-history`. Also the walk to its
// first commit, which identifies a repository read at a new path.
// Usage: history_bench [COMMITS=50000] [REPEATS=5]
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "bench/positional_args.h"
#include "tracker/sample_history.h"
#include "tracker/selection.h"

namespace {
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }
}  // namespace

int main(int argc, char** argv) {
  constexpr const char* kUsage = "history_bench [COMMITS=50000] [REPEATS=5]";
  int n = bench::positive_arg(argc, argv, 1, 50000, kUsage);
  int repeats = bench::positive_arg(argc, argv, 2, 5, kUsage);
  std::string tmpl = "/tmp/dw-histbench-XXXXXX";
  std::filesystem::path dir = mkdtemp(tmpl.data());
  std::filesystem::create_directories(dir / "script/tree");
  std::ofstream(dir / "script/tree/counter.txt") << "0\n";
  {
    std::ofstream s(dir / "script/history.toml");
    s << "tree = \"tree\"\n";
    for (int i = 0; i < n; ++i) {
      s << "[[checkin]]\nweek = " << i / 168 << "\nhours = " << i % 168
        << "\nauthor = \"Bench <bench@example.org>\"\nmessage = \"Check-in " << i << "\"\n";
      if (i % 5000 == 0) s << "tag = \"t" << i << "\"\n";
      if (i > 0) s << "[[checkin.edit]]\nfile = \"counter.txt\"\nwrite = \"" << i << "\\n\"\n";
    }
  }
  tracker::SampleHistoryOptions o;
  o.weeks = n / 168 + 1;
  o.start = tracker::default_sample_start();
  o.history_file = dir / "script/history.toml";
  auto t0 = Clock::now();
  tracker::write_sample_history(dir / "repo", o).take();
  double generate = ms_since(t0);

  struct Case {
    const char* what;
    tracker::RangeOptions options;
  };
  std::vector<Case> cases(5);
  cases[0].what = "all check-ins";
  cases[1].what = "--every 100";
  cases[1].options.sampling.every = tracker::Every{100, std::nullopt};
  cases[2].what = "--every 1d";
  cases[2].options.sampling.every = tracker::Every{1, tracker::PeriodUnit::Day};
  cases[3].what = "--every 1w --tags";
  cases[3].options.sampling.every = tracker::Every{1, tracker::PeriodUnit::Week};
  cases[3].options.sampling.tags = true;
  cases[4].what = "--since (last 30 days) --every 1d";
  cases[4].options.since = o.start + (n / 24 - 30) * 86400LL;
  cases[4].options.sampling.every = tracker::Every{1, tracker::PeriodUnit::Day};

  fmt::print("driftwatch history_bench: {} commits (generated in {:.1f} s), median of {} runs, open + walk + sample\n\n",
             n, generate / 1000, repeats);
  fmt::print("| selection | sampled | time |\n|---|---:|---:|\n");
  for (auto& c : cases) {
    std::vector<double> times;
    size_t count = 0;
    for (int r = 0; r < repeats; ++r) {
      t0 = Clock::now();
      auto repo = tracker::GitRepo::open(dir / "repo").take();
      count = tracker::select_commits(repo, c.options).take().size();
      times.push_back(ms_since(t0));
    }
    std::sort(times.begin(), times.end());
    fmt::print("| {} | {} | {:.0f} ms |\n", c.what, count, times[times.size() / 2]);
  }
  // What a repository read at a new path costs once: its identity is the
  // first commit of the whole first-parent line.
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    t0 = Clock::now();
    auto root = tracker::GitRepo::open(dir / "repo").take().root_commit("HEAD").take();
    if (root.empty()) throw std::runtime_error("no root commit");
    times.push_back(ms_since(t0));
  }
  std::sort(times.begin(), times.end());
  fmt::print("| root commit (a new path's identity) | 1 | {:.0f} ms |\n", times[times.size() / 2]);
  std::filesystem::remove_all(dir);
  return 0;
}
