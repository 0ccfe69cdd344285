// driftwatch alerts and bisect: the alerts drift analysis opened, for people
// and for cron; and bisection by hand.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "builder/recipe.h"
#include "cli/commands.h"
#include "cli/drift_output.h"
#include "cli/project.h"
#include "common/json_text.h"
#include "common/process.h"
#include "common/text.h"
#include "db/drift.h"
#include "db/jobs.h"
#include "policy/model.h"
#include "sweep/compiler_build.h"
#include "sweep/delivery_channels.h"
#include "sweep/drift.h"
#include "sweep/lineage.h"
#include "sweep/notify.h"
#include "sweep/plan.h"
#include "sweep/suite_selection.h"
#include "sweep/sweep.h"
#include "sweep/timeline.h"
#include "sweep/worker.h"
#include "tracker/git.h"
#include "tracker/sampling.h"

namespace cli {
using json = nlohmann::json;

namespace {

struct AlertArgs {
  ProjectArgs project;
  bool json = false, exit_code = false, all = false;
  long long id = 0;
  std::string note, by;
};

using common::printable;

std::string who(const std::string& by) {
  std::string name = !by.empty() ? by : common::login_name();
  // "driftwatch" marks driftwatch's own moves (a series that ended, an alert
  // superseded), which it may undo: a person working as the service's user
  // (`sudo -u driftwatch`) must not read as driftwatch.
  return name == "driftwatch" ? "driftwatch (by hand)" : name;
}

void set_exit_code(Context& ctx, db::Database& database, const std::string& project) {
  if (!db::list_alerts(database, project, {"open"}).empty()) ctx.exit_code = 1;
}

void run_list(Context& ctx, const AlertArgs& a) {
  auto project = a.project.load(ctx);
  auto database = ctx.database();
  std::vector<std::string> states;
  if (!a.all) states = {"open", "acknowledged"};
  auto alerts = db::list_alerts(database, project.name, states);
  if (a.json) {
    auto out = json::array();
    for (const auto& al : alerts) out.push_back(json::parse(sweep::alert_json(al)));
    fmt::print("{}\n", common::json_text(out, 2));
  } else if (alerts.empty()) {
    fmt::print("no {}alerts for project {}\n", a.all ? "" : "open or acknowledged ", project.name);
  } else {
    fmt::print("{:>5}  {:<12}  {:<19}  {}\n", "id", "state", "kind", "what");
    for (const auto& al : alerts)
      fmt::print("{:>5}  {:<12}  {:<19}  {}\n", al.id, al.state, al.kind, printable(sweep::alert_sentence(al)));
  }
  if (a.exit_code) set_exit_code(ctx, database, project.name);
}

void run_show(Context& ctx, const AlertArgs& a) {
  auto project = a.project.load(ctx);
  auto database = ctx.database();
  auto al = db::find_alert(database, project.name, a.id);
  if (!al) throw common::Fatal("no alert " + std::to_string(a.id) + " in project " + project.name);
  if (a.json) {
    auto j = json::parse(sweep::alert_json(*al));
    auto opening = sweep::opening_states(*al, !project.notify.command.empty(), !project.notify.webhook.empty());
    auto end = sweep::end_states(*al, opening);
    j["delivery"] = {{"opening",
                      {{"state", al->notify_state},
                       {"error", al->notify_error},
                       {"attempts", al->notify_attempts},
                       {"hook", opening.hook},
                       {"webhook", opening.webhook}}},
                     {"end",
                      {{"state", al->resolution_notify_state},
                       {"error", al->resolution_notify_error},
                       {"attempts", al->resolution_notify_attempts},
                       {"hook", end.hook},
                       {"webhook", end.webhook}}}};
    j["events"] = json::array();
    for (const auto& e : db::alert_events(database, a.id))
      j["events"].push_back({{"state", e.state}, {"who", e.who}, {"note", e.note}, {"at", e.at}});
    fmt::print("{}\n", common::json_text(j, 2));
    if (a.exit_code) set_exit_code(ctx, database, project.name);
    return;
  }
  fmt::print("alert {} ({}), {}\n{}\n", al->id, al->kind, al->state, printable(sweep::alert_sentence(*al)));
  auto d = json::parse(al->details_json, nullptr, false);
  // A toolchain is named by its label, then its directory's id.
  auto named = [](const std::string& sha, const std::string& label) {
    return sweep::is_toolchain_id(sha) ? printable(sweep::checkin_name(sha, label)) + " (" + sha + ")" : sha;
  };
  if (!al->culprit_sha.empty() && sweep::is_toolchain_id(al->culprit_sha))
    fmt::print("culprit: {}\n", named(al->culprit_sha, al->culprit_subject));
  else if (!al->culprit_sha.empty())
    fmt::print("culprit: {} {} by {}\n  {}\n", al->culprit_sha, tracker::format_date(al->culprit_time),
               printable(al->culprit_author), printable(al->culprit_subject));
  else if (!al->range_first_sha.empty() && !d.is_discarded() && d.value("spread", false))
    fmt::print("changed over: {}..{} ({})\n", named(al->range_first_sha, al->range_first_subject),
               named(al->first_bad_sha, al->first_bad_subject), reports::kSpreadNote);
  else if (!al->range_first_sha.empty())
    fmt::print("culprit: one of {}..{} ({})\n", named(al->range_first_sha, al->range_first_subject),
               named(al->first_bad_sha, al->first_bad_subject),
               reports::range_note(false, sweep::details_carried_forward(al->details_json)));
  else
    fmt::print("not pinned: {} ({})\n", named(al->first_bad_sha, al->first_bad_subject), reports::kNotPinnedNote);
  fmt::print("last good: {}\nfirst bad: {}\n", named(al->last_good_sha, al->last_good_subject),
             named(al->first_bad_sha, al->first_bad_subject));
  if (!d.is_discarded()) {
    // Each list under words a reader knows, one entry a line (as the report
    // writes them), rather than the stored JSON array.
    const std::pair<const char*, const char*> lists[] = {
        {"most_affected", "modules moved most"},    {"win_to_loss", "turned from win to loss"},
        {"loss_to_win", "turned from loss to win"}, {"failing", "failing"},
        {"features_missing", "features missing"},   {"features_new", "features new"}};
    // A failing module with the compiler's reason where it was seen failing:
    // a crash's signal or a hang's timeout, not "a crash or a hang".
    std::map<std::string, db::ModuleFailure> why;
    if (al->kind == "modules-failing" || al->kind == "compiler-failing")
      for (auto& f : db::alert_module_failures(database, al->id, al->kind == "modules-failing" ? "learned" : "default"))
        why.emplace(f.module, std::move(f));
    for (const auto& [key, label] : lists) {
      if (!d.contains(key) || !d[key].is_array() || d[key].empty()) continue;
      fmt::print("{}:\n", label);
      for (const auto& entry : d[key]) {
        auto text = entry.is_string() ? entry.get<std::string>() : entry.dump();
        auto it = std::string_view(key) == "failing" ? why.find(text) : why.end();
        if (it == why.end())
          fmt::print("  {}\n", printable(text));
        else {
          // One line of it: a compiler's message may run on for pages.
          auto said = it->second.message.substr(0, it->second.message.find('\n'));
          if (said.size() > 300) said = said.substr(0, 300) + "…";
          fmt::print("  {}: {}{}\n", printable(text), it->second.outcome, said.empty() ? "" : ": " + printable(said));
        }
      }
    }
  }
  // Per channel: a notice one channel took and another still waits for is
  // neither sent nor failed as a whole.
  auto opening = sweep::opening_states(*al, !project.notify.command.empty(), !project.notify.webhook.empty());
  auto end = sweep::end_states(*al, opening);
  fmt::print("delivery: {}{}{}\n", al->notify_state, opening.text(),
             al->notify_error.empty() ? "" : ": " + printable(al->notify_error));
  if (al->resolution_notify_state != "none" || !end.text().empty())
    fmt::print("delivery of its end: {}{}{}\n", al->resolution_notify_state, end.text(),
               al->resolution_notify_error.empty() ? "" : ": " + printable(al->resolution_notify_error));
  for (const auto& e : db::alert_events(database, a.id))
    fmt::print("  {} {} by {}{}\n", common::utc_for_people(e.at), e.state, printable(e.who),
               e.note.empty() ? "" : ": " + printable(e.note));
  if (a.exit_code) set_exit_code(ctx, database, project.name);
}

void run_move(Context& ctx, const AlertArgs& a, const std::string& state) {
  auto project = a.project.load(ctx);
  auto database = ctx.database();
  auto al = db::find_alert(database, project.name, a.id);
  if (!al) throw common::Fatal("no alert " + std::to_string(a.id) + " in project " + project.name);
  // Acknowledging says someone is on an open alert; one resolved or ignored
  // is reopened first, so its history reads in order.
  if (al->state == state) throw common::Fatal("alert " + std::to_string(a.id) + " is " + state + " already");
  if (state == "acknowledged" && al->state != "open")
    throw common::Fatal("alert " + std::to_string(a.id) + " is " + al->state + ", not open: reopen it first");
  if (!db::set_alert_state(database, project.name, a.id, state, who(a.by), a.note))
    throw common::Fatal("no alert " + std::to_string(a.id) + " in project " + project.name);
  fmt::print("alert {} {}\n", a.id, state);
  if (a.exit_code) set_exit_code(ctx, database, project.name);
}

void run_notify(Context& ctx, const AlertArgs& a) {
  auto project = a.project.load(ctx);
  // Delivering to nothing would read as "0 sent, 0 failed": all is well.
  if (!project.notify.configured())
    throw common::Fatal("no channel to deliver alerts to: set notify.command or notify.webhook in the project file");
  auto database = ctx.database();
  auto d = sweep::deliver_pending_alerts(project, database);
  fmt::print("notifications: {}\n", notifications_text(d));
  if (d.failed > 0) ctx.exit_code = 1;
  report_stuck_notifications(d);
  if (a.exit_code) set_exit_code(ctx, database, project.name);
}

struct BisectArgs {
  ProjectArgs project;
  std::string good, bad;
  int jobs = 0;
};

void run_bisect(Context& ctx, const BisectArgs& a) {
  auto project = a.project.load(ctx);
  if (project.repo.empty())
    throw common::Fatal(
        "bisect needs compiler.repo in the project file: nothing lies between two toolchains to bisect (a "
        "sweep pins their changes to the later one)");
  auto database = ctx.database();
  if (!db::try_lock_project(database, project.name))
    throw common::Fatal("a sweep of project '" + project.name + "' is running; bisect after it");
  hand_back_on_signals(ctx, local_owners(1));
  project = sweep::with_tracked_policy(database, project);  // a promoted policy replaces the project file's
  auto model = policy::PolicyModel::load(project.policy).take();
  auto repo = tracker::GitRepo::open(project.repo).take();
  sweep::Progress progress(sweep::stderr_is_terminal(), ctx.quiet);
  std::vector<std::string> failures;
  std::set<db::Id> reported;  // failed jobs whose reason a local worker gave already
  std::vector<db::Id> ids;    // the ends' jobs and bisection's
  sweep::LocalWorkers local{ctx.target(), project.name, ctx.data_dir(), sweep::jobs_or_cores(a.jobs ? a.jobs : project.jobs),
                            1, &progress, &failures, &reported, nullptr, {}};
  local.retry_backoff = project.retry_backoff;
  // The policy's training check-in: the grid below holds it, and drift keeps
  // it past `until`.
  std::string baseline;
  if (const auto& trained = model.metadata().compiler_commit; !trained.empty())
    if (auto sha = repo.resolve(trained)) baseline = *sha;
  if (!a.good.empty() || !a.bad.empty()) {
    if (a.good.empty() || a.bad.empty()) throw common::Fatal("give both --good and --bad, or neither");
    // The analysis reads the tracked first-parent line only: an end off it
    // (a tag on a release branch) would be built and evaluated for hours, then
    // silently left out. Refused before anything is measured.
    auto line = repo.cloned_history(repo.tracked(project.branch).take()).take();
    auto at = [&](const std::string& option, const std::string& rev) {
      auto sha = repo.resolve(rev).take();
      for (std::size_t i = 0; i < line.size(); ++i)
        if (line[i].sha == sha) return i;
      throw common::Fatal(option + " " + rev + " is not on the first-parent history of " +
                          (project.branch.empty() ? std::string("HEAD") : project.branch) + ", which bisection walks");
    };
    auto good_at = at("--good", a.good), bad_at = at("--bad", a.bad);
    if (good_at >= bad_at)
      throw common::Fatal("--good " + a.good + " must come before --bad " + a.bad + " on the first-parent history");
    // The project's drift ends at its `until` (or at a later training
    // check-in, which it keeps): alerts found past it would be undone by the
    // next sweep, which reads only the range.
    if (bad_at >= sweep::project_range_end(project, line, baseline))
      throw common::Fatal("--bad " + a.bad + " lies after the project's until (" + project.until +
                          "): move until, or bisect inside the range");
    // Measure both ends first: the analysis then sees the change between them.
    auto recipe = builder::load_recipe(project.recipe).take();
    sweep::PlanInput in;
    in.repo = repo.location().string();
    in.recipe = project.recipe;
    in.recipe_hash = recipe.content_hash;
    in.policy = project.policy;
    in.policy_hash = model.metadata().content_hash;
    for (const auto& rev : {a.good, a.bad}) in.checkins.push_back({repo.resolve(rev).take(), "", "", 0});
    for (const auto& s : project.suites) in.suites.push_back({s, sweep::select_suite(ctx.data_dir(), s).manifest_hash});
    in.priority = 10;
    ids = db::enqueue_jobs(database, project.name, 0, sweep::plan_jobs(in));
    sweep::run_until_finished(local, database, ids);
    // An end that did not build has no level: there is nothing to bisect between.
    if (auto counts = db::count_jobs(database, ids); counts.skipped > 0 && failures.empty())
      failures.push_back(std::to_string(counts.skipped) + " evaluation(s) of --good or --bad skipped: the check-in did not build");
  }
  // The project's grid: which measured check-ins are samples (bisection's
  // are not). As the sweep's, it holds the policy's training check-in: on
  // another grid a change spread between samples reads otherwise, and an
  // alert would open or close by which command ran last.
  // A grid that cannot be sampled (a `from` that no longer resolves, a
  // damaged tag) stops bisect as it stops the sweep: with no grid every
  // measured check-in would count as a sample, and alerts read otherwise.
  auto grid = sweep::sweep_checkins(project, project.every, project.since, std::nullopt, baseline).take();
  sweep::DriftOptions drift{project, local, true, grid};
  if (!a.good.empty()) {
    drift.bisect_from = repo.resolve(a.good).take();
    drift.bisect_to = repo.resolve(a.bad).take();
  }
  auto report = sweep::analyse_drift(drift, database);
  print_drift(report);
  // Asked for one range and given no work: said, so that a change whose
  // samples lie across A or B is not taken for no change at all.
  if (!a.good.empty() && report.bisect_evaluations == 0 && report.bisect_unevaluated == 0)
    fmt::print("nothing left to bisect between {} and {}: each change inside is pinned or has no check-in left to "
               "measure (a change whose samples lie across either end needs ends that span them)\n",
               a.good, a.bad);
  // A job that failed (an end, or a check-in bisection measured) leaves the
  // answer short: said, and the exit status says it too. Those no worker of
  // this command reported (given up when claimed, run by an outside worker,
  // cancelled) are read back.
  ids.insert(ids.end(), report.job_ids.begin(), report.job_ids.end());
  for (auto& f : sweep::failures_not_seen_here(database, project.name, ids, reported)) failures.push_back(std::move(f));
  for (const auto& f : failures) fmt::print("  failed: {}\n", printable(f));
  if (!failures.empty()) ctx.exit_code = 1;
  if (report_stuck_notifications(report.notifications)) ctx.exit_code = 1;
}

}  // namespace

void attach_alerts(CLI::App& sub, Context& ctx) {
  auto a = std::make_shared<AlertArgs>();
  a->project.attach(sub);
  sub.add_flag("--json", a->json, "machine-readable output");
  sub.add_flag("--exit-code", a->exit_code, "exit with status 1 while an alert is open (for cron and CI)");
  auto* list = sub.add_subcommand("list", "the open and acknowledged alerts (default)");
  list->add_flag("--all", a->all, "every alert, resolved and ignored too");
  list->callback([&ctx, a] { run_list(ctx, *a); });
  auto* show = sub.add_subcommand("show", "one alert with its evidence and history");
  show->add_option("id", a->id, "the alert")->required();
  show->callback([&ctx, a] { run_show(ctx, *a); });
  for (auto [name, state, help] : {std::tuple{"ack", "acknowledged", "someone is on it"},
                                   std::tuple{"resolve", "resolved", "fixed, or retrained"},
                                   std::tuple{"ignore", "ignored", "not worth acting on"},
                                   std::tuple{"reopen", "open", "open it again"}}) {
    auto* c = sub.add_subcommand(name, help);
    c->add_option("id", a->id, "the alert")->required();
    c->add_option("--note", a->note, "why");
    c->add_option("--by", a->by, "who (default: $USER)");
    std::string st = state;
    c->callback([&ctx, a, st] { run_move(ctx, *a, st); });
  }
  sub.add_subcommand("notify", "deliver alerts still pending to the hook and webhook")->callback([&ctx, a] {
    run_notify(ctx, *a);
  });
  // `driftwatch alerts` alone lists.
  sub.callback([&ctx, a, &sub] {
    if (sub.get_subcommands().empty()) run_list(ctx, *a);
  });
}

void attach_bisect(CLI::App& sub, Context& ctx) {
  auto a = std::make_shared<BisectArgs>();
  a->project.attach(sub);
  sub.add_option("--good", a->good, "a check-in before the change (with --bad)");
  sub.add_option("--bad", a->bad, "a check-in after the change");
  sub.add_option("-j,--jobs", a->jobs, "parallel compiles (default: the project's, else one per core)")
      ->check(CLI::Range(0, 1024));
  sub.footer("Without --good/--bad, bisects every change between the project's evaluated check-ins.");
  sub.callback([&ctx, a] { run_bisect(ctx, *a); });
}

}  // namespace cli
