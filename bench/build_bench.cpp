// Build figures on the sample compiler's year, without ccache so that only
// the work tree's incrementality counts. Every main-branch check-in is built
// in order in one persistent work tree (what a weekly sweep pays); every
// STRIDE-th one is also built clean in a fresh work tree right after, so the
// two are measured side by side on the same machine state.
// Usage: build_bench [STRIDE=4]
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "bench/positional_args.h"
#include "builder/recipe.h"
#include "common/text.h"
#include "tracker/checkin_build.h"
#include "tracker/sample_history.h"
#include "tracker/selection.h"

namespace fs = std::filesystem;

namespace {

builder::Recipe recipe_without_ccache() {
  auto r = builder::load_recipe("sample-compiler").take();
  r.launcher = "";
  r.content_hash += "-nocache";
  return r;
}

tracker::CheckinBuild build(const tracker::GitRepo& repo, const builder::Recipe& recipe, const tracker::CommitInfo& c,
                            const fs::path& data) {
  return tracker::build_checkin(repo, recipe, c, {data, 2, /*rebuild=*/true}).take();
}

}  // namespace

int main(int argc, char** argv) {
  auto stride = static_cast<size_t>(bench::positive_arg(argc, argv, 1, 4, "build_bench [STRIDE=4]"));
  std::string tmpl = "/tmp/dw-buildbench-XXXXXX";
  fs::path dir = mkdtemp(tmpl.data());
  tracker::write_sample_history(dir / "repo", {52, tracker::default_sample_start(), {}}).take();
  auto repo = tracker::GitRepo::open(dir / "repo").take();
  auto recipe = recipe_without_ccache();
  auto commits = tracker::select_commits(repo, {}).take();

  fmt::print("driftwatch build_bench: sample compiler year, {} main-branch check-ins, 2 jobs, no ccache\n\n",
             commits.size());
  fmt::print("| # | date | check-in | files written | outcome | incremental | clean | speed-up |\n");
  fmt::print("|---:|---|---|---:|---|---:|---:|---:|\n");
  double total = 0, paired_inc = 0, paired_clean = 0;
  std::vector<double> ratios;
  for (size_t i = 0; i < commits.size(); ++i) {
    auto inc = build(repo, recipe, commits[i], dir / "year");
    total += inc.result.seconds;
    std::string clean_cell = "", ratio_cell = "";
    if (i > 0 && i % stride == 0 && inc.result.outcome == builder::Outcome::Ok) {
      auto fresh = dir / ("clean" + std::to_string(i));
      auto clean = build(repo, recipe, commits[i], fresh);
      fs::remove_all(fresh);
      paired_inc += inc.result.seconds;
      paired_clean += clean.result.seconds;
      double ratio = clean.result.seconds / std::max(inc.result.seconds, 1e-3);
      ratios.push_back(ratio);
      clean_cell = fmt::format("{:.2f} s", clean.result.seconds);
      ratio_cell = fmt::format("{:.1f}x", ratio);
    }
    fmt::print("| {} | {} | {:.48} | {} | {} | {:.2f} s | {} | {} |\n", i, tracker::format_date(commits[i].time),
               commits[i].subject, inc.checkout.written, builder::outcome_name(inc.result.outcome), inc.result.seconds,
               clean_cell, ratio_cell);
    std::fflush(stdout);
  }
  std::sort(ratios.begin(), ratios.end());
  fmt::print("\nwhole year, incremental: {} for {} check-ins ({:.2f} s per check-in)\n", common::format_seconds(total),
             commits.size(), total / commits.size());
  if (!ratios.empty()) {
    fmt::print("paired check-ins: clean {:.1f} s vs incremental {:.1f} s in total = {:.1f}x; per check-in speed-up "
               "min {:.1f}x, median {:.1f}x, max {:.1f}x\n",
               paired_clean, paired_inc, paired_clean / paired_inc, ratios.front(), ratios[ratios.size() / 2],
               ratios.back());
  }
  fs::remove_all(dir);
  return 0;
}
