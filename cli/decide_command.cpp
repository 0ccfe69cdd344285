// driftwatch decide | retrain: should the frozen policy be retrained, and
// retraining that promotes only a candidate better on held-out code.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/project.h"
#include "common/text.h"
#include "policy/model.h"
#include "reports/retraining.h"
#include "sweep/decide.h"
#include "sweep/retrain.h"

namespace cli {

namespace {

struct DecideArgs {
  ProjectArgs project;
  bool json = false, act = false;
  int jobs = 0;  ///< --act's retrain: parallel compiles
};

struct RetrainArgs {
  ProjectArgs project;
  std::string at, promote;
  int jobs = 0;
};

void print_decision(const sweep::DecideReport& r) {
  // In the history but before the project's range, or measured on no suite
  // (its build or evaluation failed): the rules measure from the first
  // check-in evaluated after it, as the report does; with none, not at all.
  bool unmeasured = r.baseline_in_history && !r.series.empty() &&
                    std::none_of(r.series.begin(), r.series.end(), [](const auto& s) { return s.baseline_is_training; });
  bool from_first = std::all_of(r.series.begin(), r.series.end(), [](const auto& s) { return s.baseline_measured; });
  fmt::print("decision {}: {} — policy {} ({}), baseline {}{}\n", r.decision_id, r.retrain ? "RETRAIN" : "keep",
             r.policy_name, r.policy_hash.substr(0, 12), r.baseline.empty() ? "(unknown)" : r.name_of(r.baseline),
             !r.baseline_in_history ? " (not in the history: from the first evaluated check-in of the project's range)"
             : r.baseline_before_range && from_first
                 ? " (before the project's range: from the first check-in evaluated in it)"
             : unmeasured && from_first
                 ? " (not evaluated: its build or evaluation failed; from the first check-in evaluated after it)"
             : unmeasured ? " (not evaluated, nor any check-in after it on some suite: not swept yet, or its build or "
                            "evaluation failed)"
                          : "");
  if (!r.first.empty()) fmt::print("evidence: {}..{}\n", r.name_of(r.first), r.name_of(r.last));
  // A sampled check-in missing from a series moves its baseline or its
  // latest point: said, not left for people to find in `jobs`.
  for (const auto& n : r.not_measured)
    fmt::print("not measured on {}: {}{}: {}\n", n.suite, r.name_of(n.sha),
               n.after_head ? " (after the suite's last measured check-in: not read by this decision)" : "",
               common::printable(n.why));
  for (const auto& s : r.suites) {
    fmt::print("suite {}:\n", s.suite);
    for (const auto& o : s.rules) {
      const char* mark = !o.enabled ? "off" : !o.evaluated ? "n/a" : o.fired ? "FIRED" : "ok";
      if (!o.enabled) {
        fmt::print("  {:<6} {}\n", mark, o.rule);
        continue;
      }
      auto [measured, threshold] = reports::rule_figures(o.rule, o.unit, o.measured, o.threshold);
      fmt::print("  {:<6} {:<16} measured {:<10} threshold {:<10} {}\n", mark, o.rule, measured, threshold, o.detail);
    }
    if (!s.held.empty()) fmt::print("  kept: {}\n", s.held);
  }
}

/// `out`: stdout, or stderr after `decide --json` (stdout holds the JSON alone).
void print_retrain(const sweep::RetrainReport& r, std::FILE* out = stdout) {
  if (r.trained)
    fmt::print(out, "candidate {} trained at {}{}: {} on suite {} ({})\n", r.candidate_hash.substr(0, 12),
               r.checkin.substr(0, 12), r.resumed ? " (resumed from its checkpoint)" : "",
               common::signed_percent(r.train_uplift), r.train_uplift_on, common::format_seconds(r.train_seconds));
  for (const auto& h : r.holdout)
    fmt::print(out, "  held-out {}: active {} ({} losing), candidate {} ({} losing) of {} modules\n", h.suite,
               common::signed_percent(h.active_uplift), h.active_losses, common::signed_percent(h.candidate_uplift),
               h.candidate_losses, h.modules);
  fmt::print(out, "{}: {}\n",
             r.promoted               ? "PROMOTED"
             : r.state == "candidate" ? "recorded, not promoted"
                                      : "REJECTED",
             r.reason);
  fmt::print(out, "lineage: policy {} (parent {}); retrain took {}\n", r.candidate_id, r.active_id,
             common::format_seconds(r.seconds));
}

sweep::RetrainOptions retrain_options(Context& ctx, const sweep::ProjectFile& project, const std::string& at,
                                      const std::string& promote, int jobs) {
  sweep::RetrainOptions o;
  o.project = project;
  o.data_dir = ctx.data_dir();
  o.at = at;
  o.promote = promote;
  o.jobs = jobs;
  bool quiet = ctx.quiet;
  o.log = [quiet](const std::string& line) {
    if (!quiet) fmt::print(stderr, "{}\n", line);
  };
  if (!quiet)
    o.train_progress = [](const policy::TrainProgress& p) {
      if (p.phase == "reinforce" || p.phase == "imitated")
        fmt::print(stderr, "[{} {}/{}] uplift {:+.3f}% ({:.1f}% no worse)\n", p.phase, p.step, p.steps, 100 * p.uplift,
                   100 * p.no_worse);
    };
  return o;
}

void run_decide(Context& ctx, const DecideArgs& a) {
  auto project = a.project.load(ctx);
  // --act may train: a missing LibTorch module stops it before a decision is recorded.
  if (a.act) policy::load_network_runtime();
  // So does a project without a repository, which retrain cannot train at.
  if (a.act && project.repo.empty())
    throw common::Fatal(
        "decide --act retrains at a check-in, which needs compiler.repo in the project file (run `driftwatch "
        "decide` without --act; to retrain on a toolchain, `driftwatch train --build <its directory>`)");
  auto database = ctx.database();
  auto report = sweep::run_decide(database, project, ctx.data_dir());
  if (a.json)
    fmt::print("{}\n", report.json());
  else
    print_decision(report);
  ctx.exit_code = report.retrain ? 1 : 0;
  if (!report.retrain || !a.act) return;
  // A candidate trained at the active policy's own training check-in,
  // warm-started from it, could only be the same policy: hours for nothing.
  // (Unless the policy cannot run there: then it is trained afresh.)
  bool features_fired = false;
  for (const auto& s : report.suites)
    for (const auto& o : s.rules) features_fired = features_fired || (o.rule == "features" && o.fired);
  if (report.measured_head == report.baseline && !features_fired) {
    fmt::print(a.json ? stderr : stdout,
               "not retrained: the newest measured check-in is the policy's own training check-in {}; sweep later "
               "check-ins first (`driftwatch sweep`)\n",
               report.baseline.substr(0, 12));
    return;
  }
  // At the check-in the verdict was measured on (usually built already), so
  // that a candidate rejected there is not trained again until a later one
  // is measured.
  auto r = sweep::run_retrain(database, retrain_options(ctx, project, report.measured_head, "", a.jobs));
  print_retrain(r, a.json ? stderr : stdout);
  if (r.promoted) ctx.exit_code = 0;  // the retrain the verdict asked for is done
}

void run_retrain(Context& ctx, const RetrainArgs& a) {
  auto project = a.project.load(ctx);
  auto database = ctx.database();
  auto r = sweep::run_retrain(database, retrain_options(ctx, project, a.at, a.promote, a.jobs));
  print_retrain(r);
  ctx.exit_code = r.state == "rejected" ? 1 : 0;
}

}  // namespace

void attach_decide(CLI::App& sub, Context& ctx) {
  auto a = std::make_shared<DecideArgs>();
  a->project.attach(sub);
  sub.add_flag("--json", a->json, "machine-readable output");
  auto* act = sub.add_flag("--act", a->act, "when the verdict is retrain, retrain now (as `driftwatch retrain`)");
  sub.add_option("-j,--jobs", a->jobs, "with --act: parallel compiles (default: the project's, else one per core)")
      ->check(CLI::Range(0, 1024))
      ->needs(act);
  sub.footer(
      "Applies the project's [decide] rules to each suite's series since the policy's training check-in and "
      "records the decision with its evidence. Exit status: 0 keep (with --act: or a candidate was promoted); 1 "
      "retrain (with --act: a candidate trained at the newest measured check-in was rejected or waits for a "
      "person, or was judged there already and not trained again); 2 error (bad rules, no evaluated check-in, …).");
  sub.callback([&ctx, a] { run_decide(ctx, *a); });
}

void attach_retrain(CLI::App& sub, Context& ctx) {
  auto a = std::make_shared<RetrainArgs>();
  a->project.attach(sub);
  sub.add_option("--at", a->at, "train at this check-in (default: the branch's head)");
  sub.add_option("--promote", a->promote,
                 "auto: promote a candidate that wins; never: record it only "
                 "(default: the project's retrain.promote)")
      ->check(CLI::IsMember({"auto", "never"}));
  sub.add_option("-j,--jobs", a->jobs, "parallel compiles (default: the project's, else one per core)")->check(CLI::Range(0, 1024));
  sub.footer(
      "Trains a candidate on retrain.training_suite warm-started from the active policy, evaluates both at the "
      "same build on the held-out suites, and promotes it only when it wins by retrain.margin without making more "
      "than retrain.max_extra_losing more modules worse. An interrupted retrain resumes from its checkpoint. "
      "Exit status: 0 promoted (or recorded with --promote never); 1 rejected (recorded with its figures and "
      "why); 2 error (nothing changed).");
  sub.callback([&ctx, a] { run_retrain(ctx, *a); });
}

}  // namespace cli
