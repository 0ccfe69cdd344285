// driftwatch demo: the sample compiler's year on the embedded defaults.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <thread>

#include "cli/commands.h"
#include "cli/recording.h"
#include "common/data_dir.h"
#include "common/text.h"
#include "tracker/sample_history.h"
#include "tracker/selection.h"

namespace cli {
namespace {

struct DemoArgs {
  int weeks = 52;
  std::string every = "1m";
  int jobs = 0;
};

void run(Context& ctx, const DemoArgs& a) {
  auto data = ctx.data_dir();
  common::ensure_writable_dir(data, "data directory");
  auto repo_dir = data / "demo" / "sample-compiler";
  if (!std::filesystem::exists(repo_dir)) {
    auto report = tracker::write_sample_history(repo_dir, {a.weeks, tracker::default_sample_start(), {}}).take();
    fmt::print("created the sample compiler's history: {} check-ins in {}\n", report.commits, repo_dir.string());
  } else {
    fmt::print("using the sample compiler's history in {}\n", repo_dir.string());
  }
  auto database = ctx.database();
  fmt::print("database: {}\n", database.display());
  auto repo = tracker::GitRepo::open(repo_dir).take();
  auto recipe = builder::load_recipe("sample-compiler").take();
  tracker::RangeOptions range;
  range.sampling.every = tracker::parse_every(a.every).take();
  auto commits = tracker::select_commits(repo, range).take();
  int jobs = a.jobs > 0 ? a.jobs : static_cast<int>(std::thread::hardware_concurrency());
  fmt::print("building {} sampled check-ins (every {}) with recipe {}\n", commits.size(), a.every, recipe.name);

  int ok = 0, failed = 0, cached = 0;
  for (size_t i = 0; i < commits.size(); ++i) {
    const auto& c = commits[i];
    fmt::print("[{:>2}/{}] {} {} {:<60.60} ", i + 1, commits.size(), c.short_sha(), tracker::format_date(c.time),
               c.subject);
    std::fflush(stdout);
    auto b = tracker::build_checkin(repo, recipe, c, {data, jobs, false}).take();
    record_build(database, repo, recipe, b);
    const auto& r = b.result;
    fmt::print("{} {}{}\n", builder::outcome_name(r.outcome), common::format_seconds(r.seconds),
               r.from_cache ? " (cached)" : "");
    if (r.outcome != builder::Outcome::Ok) fmt::print("         {}\n", r.message);
    (r.outcome == builder::Outcome::Ok ? ok : failed)++;
    cached += r.from_cache;
  }
  fmt::print("\n{} built, {} failed ({} served from the build cache); results recorded in the database\n", ok, failed,
             cached);
}

}  // namespace

void attach_demo(CLI::App& sub, Context& ctx) {
  auto a = std::make_shared<DemoArgs>();
  sub.add_option("--weeks", a->weeks, "length of the sample history in weeks")->check(CLI::Range(1, 520));
  sub.add_option("--every", a->every, "sampling of the history (N, Nd, Nw, Nm)");
  sub.add_option("-j,--jobs", a->jobs, "parallel jobs (default: one per core)");
  sub.callback([&ctx, a] { run(ctx, *a); });
}

}  // namespace cli
