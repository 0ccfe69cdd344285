// driftwatch eval: the frozen policy against the default heuristic on a suite.
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/evaluation_run.h"
#include "common/text.h"
#include "db/store.h"
#include "evaluator/evaluation.h"
#include "evaluator/metrics.h"
#include "policy/model.h"
#include "policy/policy_runner.h"

namespace cli {
namespace fs = std::filesystem;

namespace {

struct EvalArgs {
  BuildSelector build;
  std::string suite = "smoke", policy;
  bool json = false, keep_objects = false;
};

nlohmann::json summary_json(const evaluator::UpliftSummary& s) {
  nlohmann::json worst = nlohmann::json::array();
  for (const auto& w : s.worst)
    worst.push_back({{"module", w.name}, {"default", w.default_bytes}, {"learned", w.learned_bytes}, {"ratio", w.ratio()}});
  return {{"modules", s.modules},           {"geomean_ratio", s.geomean_ratio}, {"uplift", s.uplift},
          {"total_default", s.total_default}, {"total_learned", s.total_learned}, {"total_uplift", s.total_uplift},
          {"wins", s.wins},                 {"ties", s.ties},                   {"losses", s.losses},
          {"no_worse_share", s.no_worse_share}, {"worst", worst}};
}

nlohmann::json result_json(const evaluator::EvaluationResult& r, const SelectedBuild& b, const SelectedSuite& s,
                           const policy::PolicyMetadata& p) {
  nlohmann::json failed = nlohmann::json::array(), links = nlohmann::json::array();
  for (const auto& m : r.modules)
    for (const auto* h : {&m.by_default, &m.learned})
      if (!h->ok())
        failed.push_back({{"module", m.name}, {"heuristic", h == &m.by_default ? "default" : "learned"},
                          {"outcome", h->outcome}, {"message", h->message}});
  for (const auto& l : r.links)
    links.push_back({{"group", l.group}, {"ok", l.ok}, {"message", l.message}, {"default_text", l.default_text},
                     {"learned_text", l.learned_text}});
  return {{"build", b.label},
          {"commit", b.commit},
          {"suite", s.suite.name},
          {"policy", p.name},
          {"policy_hash", p.content_hash},
          {"summary", summary_json(r.summary)},
          {"linked", {{"summary", summary_json(r.linked_summary)}, {"groups", links}}},
          {"failed", failed},
          {"not_consulted", r.not_consulted},
          {"compatibility", nlohmann::json::parse(r.compat.to_json())},
          {"seconds", r.seconds}};
}

std::vector<db::MeasurementRow> measurements_of(const evaluator::ModuleResult& m, db::Id bench) {
  std::vector<db::MeasurementRow> rows;
  for (const auto* h : {&m.by_default, &m.learned}) {
    const char* heuristic = h == &m.by_default ? "default" : "learned";
    rows.push_back({bench, heuristic, evaluator::metric_name(evaluator::Metric::CompileSeconds), h->seconds});
    if (!h->ok()) continue;
    rows.push_back({bench, heuristic, evaluator::metric_name(evaluator::Metric::TextBytes), double(h->sizes.text)});
    rows.push_back({bench, heuristic, evaluator::metric_name(evaluator::Metric::CodeBytes), double(h->sizes.code)});
    if (h == &m.learned)
      rows.push_back({bench, heuristic, evaluator::metric_name(evaluator::Metric::Decisions), double(h->decisions)});
  }
  return rows;
}

void print_table(const evaluator::EvaluationResult& r, const SelectedBuild& b, const SelectedSuite& s,
                 const policy::PolicyMetadata& p) {
  const auto& u = r.summary;
  fmt::print("\n{} on suite {} ({} modules), compiler {}\n", p.name, s.suite.name, s.suite.modules.size(), b.label);
  fmt::print("features: {}\n\n", r.compat.summary());
  fmt::print("  {:<28} {:>14} {:>14} {:>9}\n", "", "default", "learned", "change");
  fmt::print("  {:<28} {:>14} {:>14} {:>+8.2f}%\n", ".text, all modules (bytes)", u.total_default, u.total_learned,
             -100 * u.total_uplift);
  fmt::print("  {:<28} {:>14} {:>14} {:>+8.2f}%\n", ".text, geometric mean ratio", "1", fmt::format("{:.4f}", u.geomean_ratio),
             -100 * u.uplift);
  if (r.linked_summary.modules > 0)
    fmt::print("  {:<28} {:>14} {:>14} {:>+8.2f}%\n", fmt::format(".text, {} linked binaries", r.linked_summary.modules),
               r.linked_summary.total_default, r.linked_summary.total_learned, -100 * r.linked_summary.total_uplift);
  fmt::print("\nuplift {:+.2f}% (geometric mean), {:+.2f}% (total); wins {}, ties {}, losses {}: "
             "matches or beats the default on {:.1f}% of modules\n",
             100 * u.uplift, 100 * u.total_uplift, u.wins, u.ties, u.losses, 100 * u.no_worse_share);
  if (!u.worst.empty()) {
    fmt::print("worst regressions:\n");
    for (const auto& w : u.worst)
      fmt::print("  {:<48} {:>8} → {:>8} B ({:+.1f}%)\n", w.name, w.default_bytes, w.learned_bytes,
                 100 * (w.ratio() - 1));
  }
  for (const auto& l : r.links)
    if (!l.ok) fmt::print("link group {} not measured: {}\n", l.group, l.message);
  if (r.not_consulted > 0)
    fmt::print("{} module(s) left out: the compiler never consulted the policy (check the ML flags)\n",
               r.not_consulted);
  if (r.failed > 0) {
    fmt::print("{} module(s) failed to compile:\n", r.failed);
    for (const auto& m : r.modules)
      for (const auto* h : {&m.by_default, &m.learned})
        if (!h->ok() && !h->not_consulted())
          fmt::print("  {} ({}): {}: {}\n", m.name, h == &m.by_default ? "default" : "learned", h->outcome, h->message);
  }
  fmt::print("{} compiles in {}\n", 2 * r.modules.size(), common::format_seconds(r.seconds));
}

}  // namespace

StoredEvaluation evaluate_and_store(const Context& ctx, db::Database& database, const SelectedBuild& build,
                                    const SelectedSuite& suite, const policy::PolicyModel& model, int jobs,
                                    bool keep_objects) {
  if (!build.build_id)
    throw common::Fatal("artifact directory " + build.label + " is not a build driftwatch recorded; use --repo and a check-in");
  policy::use_one_thread();
  const auto& meta = model.metadata();
  auto policy_id = db::upsert_policy(database, meta.name, meta.content_hash, meta.compiler_commit,
                                     meta.training.empty() ? "{}" : meta.training);
  std::vector<db::BenchmarkRow> rows;
  for (const auto& m : suite.suite.modules) rows.push_back({m.name, m.sha256, evaluator::language_name(m.language)});
  std::vector<db::Id> bench_ids;
  auto suite_id = db::upsert_suite(database, suite.suite.name, suite.manifest_hash,
                                   nlohmann::json{{"dir", suite.dir.string()}}.dump(), rows, &bench_ids);
  auto eval_id = db::begin_evaluation(database, *build.build_id, policy_id, suite_id);

  evaluator::EvaluationOptions o;
  o.suite = &suite.suite;
  o.suite_dir = suite.dir;
  o.compiler = build.compiler;
  o.jobs = jobs;
  o.work_dir = ctx.data_dir() / "eval" / std::to_string(eval_id);
  o.learned = [&model](policy::CompatReport* report) { return policy::make_policy_runner_copy(model, report); };
  if (!ctx.quiet)
    o.progress = [](int done, int total, const evaluator::ModuleResult& m) {
      if (done % 50 == 0 || done == total || !m.both_ok())
        fmt::print(stderr, "  [{:>4}/{}] {}{}\n", done, total, m.name, m.both_ok() ? "" : " (failed)");
    };
  std::error_code ec;
  fs::remove_all(o.work_dir, ec);
  auto result = evaluator::evaluate(o);
  if (!result) {
    db::set_build_feature_report(database, *build.build_id,
                                 "{\"error\": " + nlohmann::json(result.error().message).dump() + "}");
    db::fail_evaluation(database, eval_id, result.error().message);
    throw common::Fatal(result.error().message);
  }
  db::EvaluationRecord record;
  record.evaluation_id = eval_id;
  for (std::size_t i = 0; i < result->modules.size(); ++i) {
    const auto& m = result->modules[i];
    record.results.push_back({bench_ids[i], "default", m.by_default.outcome, m.by_default.message});
    record.results.push_back({bench_ids[i], "learned", m.learned.outcome, m.learned.message});
    auto ms = measurements_of(m, bench_ids[i]);
    record.measurements.insert(record.measurements.end(), ms.begin(), ms.end());
  }
  StoredEvaluation out{std::move(*result), {}, eval_id};
  out.json = result_json(out.result, build, suite, meta);
  record.summary_json = out.json.dump();
  record.compat_json = out.result.compat.to_json();
  db::store_evaluation(database, record);
  db::set_build_feature_report(database, *build.build_id, out.result.compat.to_json());
  if (!keep_objects) fs::remove_all(o.work_dir, ec);
  return out;
}

namespace {

void run_eval(Context& ctx, const EvalArgs& a) {
  auto database = ctx.database();
  auto build = select_build(ctx, a.build, &database);
  auto suite = select_suite(ctx, a.suite);
  auto model = policy::PolicyModel::load(a.policy).take();
  auto stored = evaluate_and_store(ctx, database, build, suite, model, jobs_or_cores(a.build.jobs), a.keep_objects);
  if (a.json) fmt::print("{}\n", stored.json.dump(2));
  else print_table(stored.result, build, suite, model.metadata());
}

}  // namespace

void attach_eval(CLI::App& sub, Context& ctx) {
  auto a = std::make_shared<EvalArgs>();
  a->build.attach(sub);
  sub.add_option("--suite", a->suite, "suite name or directory (default: smoke)");
  sub.add_option("--policy", a->policy, "the frozen policy file")->required();
  sub.add_flag("--json", a->json, "machine-readable output");
  sub.add_flag("--keep-objects", a->keep_objects, "keep the object files under the data directory");
  sub.callback([&ctx, a] { run_eval(ctx, *a); });
}

}  // namespace cli
