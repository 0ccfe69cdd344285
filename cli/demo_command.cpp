// driftwatch demo: the sample compiler's year on the embedded defaults —
// its history, the monthly builds, the default held-out suite, and the
// shipped frozen policy evaluated against the default heuristic at every
// monthly check-in. Everything lands in the database.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "cli/commands.h"
#include "sweep/evaluation_run.h"
#include "sweep/recording.h"
#include "common/data_dir.h"
#include "common/text.h"
#include "evaluator/default_suites.h"
#include "evaluator/package_table.h"
#include "tracker/sample_history.h"
#include "tracker/selection.h"

namespace cli {
namespace fs = std::filesystem;

namespace {

struct DemoArgs {
  int weeks = 52;
  std::string every = "1m";
  std::string suite = "holdout";
  std::string policy = DRIFTWATCH_SHIPPED_POLICY;
  int jobs = 0;
};

void ensure_suite(const Context& ctx, const std::string& name, int jobs) {
  const auto* spec = evaluator::default_suite_table().find(name);
  if (!spec) return;  // a suite of the user's: select_suite() says if it is missing
  evaluator::DefaultSuiteOptions o;
  o.data_dir = ctx.data_dir();
  o.jobs = jobs;
  o.progress = [](const std::string& line) { fmt::print(stderr, "  {}\n", line); };
  auto r = evaluator::build_default_suite(*spec, o).take();
  fmt::print("suite {}: {}{}\n", r.suite.name, evaluator::describe_modules(r.suite), r.cached ? " (cached)" : "");
}

void run(Context& ctx, const DemoArgs& a) {
  auto data = ctx.data_dir();
  common::ensure_writable_dir(data, "data directory");
  int jobs = sweep::jobs_or_cores(a.jobs);
  auto model = policy::PolicyModel::load(a.policy).take();
  fmt::print("policy: {} ({}), trained at {}\n", model.metadata().name, model.metadata().content_hash.substr(0, 12),
             model.metadata().compiler_commit.substr(0, 12));

  auto repo_dir = data / "demo" / "sample-compiler";
  if (!fs::exists(repo_dir)) {
    auto report = tracker::write_sample_history(repo_dir, {a.weeks, tracker::default_sample_start(), {}}).take();
    fmt::print("created the sample compiler's history: {} check-ins in {}\n", report.commits, repo_dir.string());
  } else {
    fmt::print("using the sample compiler's history in {}\n", repo_dir.string());
  }
  auto database = ctx.database();
  fmt::print("database: {}\n", database.display());
  ensure_suite(ctx, a.suite, jobs);
  auto suite = sweep::select_suite(data, a.suite);

  auto repo = tracker::GitRepo::open(repo_dir).take();
  auto recipe = builder::load_recipe("sample-compiler").take();
  tracker::RangeOptions range;
  range.sampling.every = tracker::parse_every(a.every).take();
  auto commits = tracker::select_commits(repo, range).take();
  fmt::print("\nevaluating at {} sampled check-ins (every {}) on suite {}:\n\n", commits.size(), a.every,
             suite.suite.name);

  std::vector<std::string> rows;
  for (size_t i = 0; i < commits.size(); ++i) {
    const auto& c = commits[i];
    fmt::print(stderr, "[{:>2}/{}] {} {} {}\n", i + 1, commits.size(), c.short_sha(), tracker::format_date(c.time),
               c.subject);
    auto b = tracker::build_checkin(repo, recipe, c, {data, jobs, false}).take();
    auto build_id = sweep::record_build(database, repo, recipe, b);
    std::string line = fmt::format("{}  {}  {:<52.52}  ", tracker::format_date(c.time), c.short_sha(), c.subject);
    if (b.result.outcome != builder::Outcome::Ok) {
      rows.push_back(line + fmt::format("build {}", builder::outcome_name(b.result.outcome)));
      continue;
    }
    auto build = sweep::selected_from(repo, recipe, b, build_id);
    sweep::EvaluationRunOptions eo;
    eo.data_dir = data;
    eo.jobs = jobs;
    auto stored = sweep::evaluate_and_store(database, build, suite, model, eo);
    const auto& u = stored.result.summary;
    rows.push_back(line + fmt::format("{:+6.2f}%  {:+6.2f}%  {:>3}/{:>3}/{:>3}", 100 * u.uplift, 100 * u.total_uplift,
                                      u.wins, u.ties, u.losses));
  }
  fmt::print("\n{:<10}  {:<12}  {:<52}  {:>7}  {:>7}  {}\n", "date", "check-in", "subject", "uplift", "total",
             "wins/ties/losses");
  for (const auto& r : rows) fmt::print("{}\n", r);
  fmt::print("\nuplift = .text reduction of the learned policy against the default heuristic (geometric mean over "
             "modules; total over the suite). All builds and measurements are in the database.\n");
}

}  // namespace

void attach_demo(CLI::App& sub, Context& ctx) {
  auto a = std::make_shared<DemoArgs>();
  sub.add_option("--weeks", a->weeks, "length of the sample history in weeks")->check(CLI::Range(1, 520));
  sub.add_option("--every", a->every, "sampling of the history (N, Nd, Nw, Nm; default 1m)");
  sub.add_option("--suite", a->suite, "suite to evaluate on (default: holdout, built on first use)");
  sub.add_option("--policy", a->policy, "the frozen policy (default: the shipped one)");
  sub.add_option("-j,--jobs", a->jobs, "parallel jobs (default: one per core)");
  sub.callback([&ctx, a] { run(ctx, *a); });
}

}  // namespace cli
