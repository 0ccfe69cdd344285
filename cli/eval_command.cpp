// driftwatch eval: the frozen policy against the default heuristic on a suite.
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/build_selection.h"
#include "sweep/evaluation_run.h"
#include "common/json_text.h"
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
  bool json = false, keep_objects = false, no_reuse = false, compile_every_default = false;
};

void print_module_done(int done, int total, const evaluator::ModuleResult& m) {
  if (done % 50 == 0 || done == total || !m.both_ok())
    fmt::print(stderr, "  [{:>4}/{}] {}{}\n", done, total, m.name, m.both_ok() ? "" : " (failed)");
}

void print_table(const evaluator::EvaluationResult& r, const sweep::SelectedBuild& b, const sweep::SelectedSuite& s,
                 const policy::PolicyMetadata& p, const std::string& reused_from) {
  const auto& u = r.summary;
  fmt::print("\n{} on suite {} ({} modules), compiler {}\n", p.name, s.suite.name, s.suite.modules.size(), b.label);
  if (!reused_from.empty()) fmt::print("{} (no compiles; --no-reuse compiles anyway)\n", reused_from);
  fmt::print("features: {}\n\n", r.compat.summary());
  fmt::print("  {:<28} {:>14} {:>14} {:>9}\n", "", "default", "learned", "change");
  // The learned side's change, the uplift's opposite (signed_percent prints no "-0.00%").
  fmt::print("  {:<28} {:>14} {:>14} {:>9}\n", ".text, all modules (bytes)", u.total_default, u.total_learned,
             common::signed_percent(-u.total_uplift));
  fmt::print("  {:<28} {:>14} {:>14} {:>9}\n", ".text, geometric mean ratio", "1.0000",
             fmt::format("{:.4f}", u.geomean_ratio), common::signed_percent(-u.uplift));
  if (r.linked_summary.modules > 0)
    fmt::print("  {:<28} {:>14} {:>14} {:>9}\n", fmt::format(".text, {} linked binaries", r.linked_summary.modules),
               r.linked_summary.total_default, r.linked_summary.total_learned,
               common::signed_percent(-r.linked_summary.total_uplift));
  // As `decide` counts it: a module the policy's compile broke is worse than the default's.
  int broken = 0;
  for (const auto& m : r.modules) broken += m.learned_failed();
  int judged = u.wins + u.ties + u.losses + broken;
  fmt::print(
      "\nuplift {} (geometric mean), {} (total); wins {}, ties {}, losses {}: "
      "matches or beats the default on {:.1f}% of modules{}\n",
      common::signed_percent(u.uplift), common::signed_percent(u.total_uplift), u.wins, u.ties, u.losses,
      judged > 0 ? 100.0 * (u.wins + u.ties) / judged : 100.0,
      broken > 0 ? fmt::format(" (the {} the policy's compile failed on count as worse)", broken) : "");
  // A small suite's geometric mean may rest on a few modules: said.
  if (u.zero_size > 0)
    fmt::print(
        "the geometric mean leaves out {} module(s) with no .text under one heuristic or both (it is over {} "
        "of the {}; they count in the totals and in wins/ties/losses)\n",
        u.zero_size, u.modules - u.zero_size, u.modules);
  if (r.packages.size() > 1) {
    fmt::print("per package:\n  {:<24} {:>7} {:>9} {:>9} {:>16}\n", "package", "modules", "geomean", "total",
               "wins/ties/losses");
    for (const auto& [package, p] : r.packages)
      fmt::print("  {:<24} {:>7} {:>9} {:>9} {:>16}\n", package, p.modules, common::signed_percent(p.uplift),
                 common::signed_percent(p.total_uplift), fmt::format("{}/{}/{}", p.wins, p.ties, p.losses));
  }
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
  if (r.defaults_shared > 0)
    fmt::print("{} module(s) where the policy took every default decision: the default's object is the learned one "
               "({} more such compiled twice, byte for byte the same; --compile-every-default compiles them all)\n",
               r.defaults_shared, r.defaults_checked);
  if (reused_from.empty())
    fmt::print("{} compiles in {}\n", 2 * r.modules.size() - r.defaults_shared, common::format_seconds(r.seconds));
  for (const auto& w : r.warnings) fmt::print("warning: {}\n", w);
}

}  // namespace

namespace {

void run_eval(Context& ctx, const EvalArgs& a) {
  // The policy and suite first: a typo in either must not cost a compiler build.
  auto model = policy::PolicyModel::load(a.policy).take();
  auto suite = sweep::select_suite(ctx.data_dir(), a.suite);
  auto database = ctx.database();
  auto build = select_build(ctx, a.build, &database);
  sweep::EvaluationRunOptions o;
  o.data_dir = ctx.data_dir();
  o.jobs = sweep::jobs_or_cores(a.build.jobs);
  o.keep_objects = a.keep_objects;
  // Objects to keep must be compiled: a reused result has none.
  o.reuse = !a.no_reuse && !a.keep_objects;
  o.compile_every_default = a.compile_every_default;
  o.reconnect = true;  // it holds no lock a lost session would take with it
  if (!ctx.quiet) o.progress = print_module_done;
  auto stored = sweep::evaluate_and_store(database, build, suite, model, o);
  if (a.json) fmt::print("{}\n", common::json_text(stored.json, 2));  // module messages: a compiler's bytes
  else print_table(stored.result, build, suite, model.metadata(), stored.reused_from);
  if (!stored.kept_objects.empty())
    fmt::print(a.json ? stderr : stdout, "objects kept in {} (default/ and learned/; remove it when done)\n",
               stored.kept_objects.string());
}

}  // namespace

void attach_eval(CLI::App& sub, Context& ctx) {
  auto a = std::make_shared<EvalArgs>();
  a->build.attach(sub);
  sub.add_option("--suite", a->suite, "suite name or directory (default: smoke)");
  sub.add_option("--policy", a->policy, "the frozen policy file")->required();
  sub.add_flag("--json", a->json, "machine-readable output");
  sub.add_flag("--keep-objects", a->keep_objects, "keep the object files, in <data dir>/objects/<evaluation id>");
  sub.add_flag("--no-reuse", a->no_reuse,
               "compile even when an earlier evaluation of a byte-identical compiler (same suite, policy and compile "
               "command) could be reused");
  sub.add_flag("--compile-every-default", a->compile_every_default,
               "compile every module's default, also where the policy took every default decision (its learned object "
               "is otherwise the default's)");
  sub.callback([&ctx, a] { run_eval(ctx, *a); });
}

}  // namespace cli
