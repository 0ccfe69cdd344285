// driftwatch demo: the sample compiler's year on the embedded defaults —
// its history, the default held-out suite, the shipped frozen policy, and a
// project that sweeps the year monthly and bisects every change to the
// check-in that made it. Everything lands in the database.
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>

#include "cli/commands.h"
#include "cli/drift_output.h"
#include "db/drift.h"
#include "reports/render.h"
#include "sweep/compiler_build.h"
#include "sweep/decide.h"
#include "sweep/lineage.h"
#include "sweep/recording.h"
#include "sweep/report.h"
#include "sweep/suite_selection.h"
#include "sweep/sweep.h"
#include "common/atomic_file.h"
#include "common/data_dir.h"
#include "common/text.h"
#include "evaluator/default_suites.h"
#include "evaluator/package_table.h"
#include "tracker/sample_history.h"
#include "builder/recipe.h"
#include "policy/model.h"
#include "tracker/git.h"
#include "tracker/sampling.h"

namespace cli {
namespace fs = std::filesystem;

namespace {

struct DemoArgs {
  int weeks = 52;
  std::string every = "1m";
  std::string suite = "holdout";
  std::string policy = DRIFTWATCH_SHIPPED_POLICY;
  int jobs = 0;
  bool serve = false;
  int port = 8765;
};

/// The demo's phases, announced as they start: a newcomer sees where the
/// time goes (the suite and the sweep are the long ones, each with its bar).
constexpr int kPhases = 5;
void phase(int n, const std::string& what) { fmt::print(stderr, "\n== {}/{} {}\n", n, kPhases, what); }

void ensure_suite(const Context& ctx, const std::string& name, int jobs) {
  const auto* spec = evaluator::default_suite_table().find(name);
  if (!spec) return;  // a suite of the user's: select_suite() says if it is missing
  sweep::Progress progress(sweep::stderr_is_terminal(), ctx.quiet);
  progress.start(static_cast<int>(spec->packages.size()));
  evaluator::DefaultSuiteOptions o;
  o.data_dir = ctx.data_dir();
  o.jobs = jobs;
  o.progress = [&progress](const std::string& line) { progress.line("  " + line); };
  o.package_done = [&progress](const std::string& package, int, int) { progress.step("package " + package + " ready"); };
  auto r = evaluator::build_default_suite(*spec, o).take();
  if (sweep::stderr_is_terminal() && !ctx.quiet) fmt::print(stderr, "\n");
  fmt::print("suite {}: {}{}\n", r.suite.name, evaluator::describe_modules(r.suite), r.cached ? " (cached)" : "");
}

/// The measured check-ins month by month, culprits marked.
void print_series(db::Database& database, const std::filesystem::path& data_dir, const sweep::ProjectFile& p,
                  const sweep::SweepReport& report) {
  auto repo = tracker::GitRepo::open(p.repo).take();
  auto history = repo.first_parent_history("HEAD").take();
  auto recipe = builder::load_recipe(p.recipe).take();
  const auto policy_meta = policy::read_policy_metadata(p.policy).take();
  auto suite = sweep::select_suite(data_dir, p.suites.front());
  std::map<std::string, db::SeriesPoint> by_sha;
  for (auto& pt : sweep::series_of_repository(database, sweep::recorded_repository(database, repo, "HEAD"),
                                              recipe.content_hash, policy_meta.content_hash, suite.manifest_hash))
    by_sha[pt.sha] = std::move(pt);
  std::set<std::string> culprits;
  for (const auto& f : report.drift.findings) culprits.insert(f.culprit);
  fmt::print("\n{:<10}  {:<12}  {:<52}  {:>7}  {:>7}  {}\n", "date", "check-in", "subject", "uplift", "total",
             "wins/ties/losses");
  for (const auto& c : history) {
    auto it = by_sha.find(c.sha);
    if (it == by_sha.end()) continue;
    const auto& pt = it->second;
    std::string line =
        fmt::format("{}  {}  {:<52.52}  ", tracker::format_date(c.time), c.short_sha(), common::printable(c.subject));
    if (pt.build_outcome != "ok") line += "build " + pt.build_outcome;
    else if (!pt.evaluated && !pt.evaluation_error.empty())
      line += "not evaluated: " + common::printable(pt.evaluation_error);
    else if (!pt.evaluated) line += "not evaluated";
    else
      line += fmt::format("{:>7}  {:>7}  {:>3}/{:>3}/{:>3}", common::signed_percent(pt.uplift),
                          common::signed_percent(pt.total_uplift), pt.wins, pt.ties, pt.losses);
    if (culprits.count(c.sha)) line += "  <- culprit";
    fmt::print("{}\n", line);
  }
}

void run(Context& ctx, const DemoArgs& a) {
  auto data = ctx.data_dir();
  common::ensure_writable_dir(data, "data directory");
  int jobs = sweep::jobs_or_cores(a.jobs);
  // Checked before the history, the database and the suite: the project
  // file written below must parse, and name the policy wherever it is read from.
  (void)tracker::parse_every(a.every).take();
  require_shipped_policy_if_default(a.policy);
  auto policy_file = fs::absolute(a.policy).string();
  // A suite given as a directory is read from the project file under
  // <data>/demo: relative to here, it would be looked for there.
  auto suite = a.suite.find('/') == std::string::npos ? a.suite : fs::absolute(a.suite).lexically_normal().string();
  auto model = policy::PolicyModel::load(policy_file).take();
  fmt::print("policy: {} ({}), trained at {}\n", model.metadata().name, model.metadata().content_hash.substr(0, 12),
             model.metadata().compiler_commit.substr(0, 12));

  phase(1, "the sample compiler's history");
  auto repo_dir = data / "demo" / "sample-compiler";
  if (!fs::exists(repo_dir)) {
    auto report = tracker::write_sample_history(repo_dir, {a.weeks, tracker::default_sample_start(), {}}).take();
    fmt::print("created the sample compiler's history: {} check-ins in {}\n", report.commits, repo_dir.string());
  } else {
    // Made by an earlier demo, perhaps of another length: said, so a
    // --weeks that changes nothing does not pass unnoticed.
    fmt::print("using the sample compiler's history in {} (--weeks makes a new one only where there is none: "
               "delete it to change its length)\n",
               repo_dir.string());
  }
  auto database = ctx.database();
  fmt::print("database: {}\n", database.display());
  phase(2, "the benchmark suite " + suite + " (Debian source packages, built once)");
  ensure_suite(ctx, suite, jobs);

  // The demo is a project like any other: its file is kept for `sweep --config`.
  auto project_dir = data / "demo";
  auto text = sweep::project_file_template("demo", repo_dir.string(), policy_file);
  auto replace = [&text](const std::string& from, const std::string& to) {
    text.replace(text.find(from), from.size(), to);
  };
  replace("every = \"1w\"", "every = \"" + a.every + "\"");
  replace("names = [\"holdout\"]", "names = [" + nlohmann::json(suite).dump() + "]");
  sweep::SweepOptions o;
  o.project = sweep::parse_project_file(text, (project_dir / "driftwatch.toml").string(), project_dir).take();
  o.project.path = project_dir / "driftwatch.toml";
  common::write_file_atomically(project_dir / "driftwatch.toml", text).take();  // only once it parses
  o.target = ctx.target();
  o.data_dir = data;
  o.jobs = jobs;
  sweep::Progress progress(sweep::stderr_is_terminal(), ctx.quiet);
  o.progress = &progress;
  phase(3, "the sweep: build and evaluate every sampled check-in, bisect every change");
  fmt::print("\nsweeping the year (every {}) on suite {}, then bisecting every change of the uplift or the sizes:\n\n",
             a.every, suite);
  hand_back_on_signals(ctx, local_owners(std::max(1, o.workers)));
  auto report = sweep::run_sweep(o);
  // The sweep measured the tracked policy: one promoted by a retrain replaces the project file's.
  print_series(database, data, sweep::with_tracked_policy(database, o.project), report);
  print_drift(report.drift);
  // A failed job leaves a check-in out of the figures: said, and the exit status says it too.
  for (const auto& f : report.failures) fmt::print("  failed: {}\n", f);
  bool failed = report.jobs.failed > 0 || !report.failures.empty();
  fmt::print("\nuplift = .text reduction of the learned policy against the default heuristic (geometric mean over "
             "modules; total over the suite). The project file is {}; everything is in the database: try "
             "`driftwatch alerts --config {}`.\n",
             (project_dir / "driftwatch.toml").string(), (project_dir / "driftwatch.toml").string());

  // The decision, recorded as `driftwatch decide` records it (no retraining here: too slow for a demo).
  phase(4, "the retraining decision");
  auto decision = sweep::run_decide(database, o.project, data);

  // The report: what a newcomer opens.
  phase(5, "the report");
  auto report_dir = project_dir / "report";
  auto data_report = sweep::assemble_report(o.project, data, database);
  sweep::write_report(data_report, report_dir, {"html", "md", "json"}).take();
  fmt::print("\nthe report: {} (also report.md and report.json beside it)\n", (report_dir / "index.html").string());
  for (const auto& line : reports::summary_lines(data_report)) fmt::print("  {}\n", line);
  // The demo builds only the held-out suites: retraining also needs its
  // training (and validation) suites, and would stop at once without them.
  std::string unbuilt;
  for (const auto& s : {o.project.retrain.training_suite, o.project.retrain.validation_suite})
    if (!s.empty() && !fs::exists(evaluator::suites_root(data) / s / evaluator::kSuiteManifestFile)) unbuilt += " " + s;
  fmt::print("\n{}: {}driftwatch retrain --config {}\n",
             decision.retrain ? "next step" : "the rules say keep; to retrain anyway",
             unbuilt.empty() ? "" : "driftwatch suite build" + unbuilt + " && ",
             (project_dir / "driftwatch.toml").string());
  if (failed) {
    fmt::print("\n{} job(s) failed (listed above): the figures leave their check-ins out\n",
               std::max<long>(report.jobs.failed, static_cast<long>(report.failures.size())));
    ctx.exit_code = 1;
  }
  if (a.serve) serve_dir(report_dir, a.port);
}

}  // namespace

void attach_demo(CLI::App& sub, Context& ctx) {
  auto a = std::make_shared<DemoArgs>();
  sub.add_option("--weeks", a->weeks, "length of the sample history in weeks")->check(CLI::Range(1, 520));
  sub.add_option("--every", a->every, "sampling of the history (N, Nd, Nw, Nm; default 1m)");
  sub.add_option("--suite", a->suite, "suite to evaluate on (default: holdout, built on first use)");
  sub.add_option("--policy", a->policy, "the frozen policy (default: the shipped one)");
  sub.add_option("-j,--jobs", a->jobs, "parallel jobs (default: one per core)")->check(CLI::Range(0, 1024));
  sub.add_flag("--serve", a->serve, "then serve the report on http://127.0.0.1:PORT/ until stopped");
  sub.add_option("--port", a->port, "port for --serve (default 8765; 0: any free port)")->check(CLI::Range(0, 65535));
  sub.callback([&ctx, a] { run(ctx, *a); });
}

}  // namespace cli
