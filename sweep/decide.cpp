#include "sweep/decide.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "builder/recipe.h"
#include "db/drift.h"
#include "db/policies.h"
#include "reports/drift.h"
#include "reports/report_data.h"
#include "sweep/compat_features.h"
#include "sweep/lineage.h"
#include "sweep/not_measured.h"
#include "sweep/recording.h"
#include "sweep/series_sizes.h"
#include "sweep/suite_selection.h"
#include "sweep/sweep.h"
#include "sweep/timeline.h"
#include "tracker/git.h"

namespace sweep {
using json = nlohmann::json;

namespace {

/// A recorded point as the rules see it.
reports::RetrainPoint retrain_point(const db::SeriesPoint& p, std::size_t suite_modules) {
  reports::RetrainPoint r;
  r.sha = p.sha;
  r.uplift = p.uplift;
  // A module the policy's compile broke is worse than the default's.
  int measured = p.wins + p.ties + p.losses + p.learned_failed();
  r.no_worse = measured > 0 ? double(p.wins + p.ties) / measured : 1.0;
  r.measured = measured;
  r.modules = static_cast<int>(suite_modules);
  auto lost = compat_features(p.compat_json).lost;
  r.features_lost = static_cast<int>(lost.size());
  r.decisions = p.learned_decisions;
  r.learned_failed = p.learned_failed();
  for (const auto& f : lost) r.features_note += (r.features_note.empty() ? "" : ", ") + f;
  return r;
}

json rule_json(const reports::RuleOutcome& o) {
  return {{"rule", o.rule},         {"enabled", o.enabled},     {"evaluated", o.evaluated}, {"fired", o.fired},
          {"measured", o.measured}, {"threshold", o.threshold}, {"unit", o.unit},           {"first", o.first},
          {"last", o.last},         {"detail", o.detail}};
}

}  // namespace

std::string DecideReport::json() const {
  nlohmann::json suites_j = nlohmann::json::array();
  for (std::size_t i = 0; i < suites.size(); ++i) {
    const auto& s = suites[i];
    nlohmann::json rules = nlohmann::json::array(), points = nlohmann::json::array();
    for (const auto& o : s.rules) rules.push_back(rule_json(o));
    if (i < series.size())
      for (const auto& pt : series[i].points)
        points.push_back({{"sha", pt.sha},
                          {"uplift", pt.uplift},
                          {"no_worse", pt.no_worse},
                          {"features_lost", pt.features_lost},
                          {"decisions", pt.decisions}});
    suites_j.push_back({{"suite", s.suite},
                        {"retrain", s.retrain},
                        {"held", s.held},
                        {"first", s.first},
                        {"last", s.last},
                        {"baseline_measured", i < series.size() && series[i].baseline_measured},
                        {"age_checkins", i < series.size() ? series[i].age_checkins : 0},
                        {"rules", rules},
                        {"series", points}});
  }
  auto not_measured_json = nlohmann::json::array();
  for (const auto& n : not_measured)
    not_measured_json.push_back({{"suite", n.suite}, {"sha", n.sha}, {"why", n.why}, {"after_head", n.after_head}});
  return nlohmann::json{{"verdict", retrain ? "retrain" : "keep"},
                        {"policy", policy_name},
                        {"policy_hash", policy_hash},
                        {"baseline", baseline},
                        {"baseline_in_history", baseline_in_history},
                        {"baseline_before_range", baseline_before_range},
                        {"head", head},
                        {"first", first},
                        {"last", last},
                        {"measured_head", measured_head},
                        {"not_measured", not_measured_json},
                        {"decision_id", decision_id},
                        {"suites", suites_j},
                        {"toolchain_labels", labels}}  // Job errors and module names quote compilers, in any encoding.
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string DecideReport::name_of(const std::string& sha) const {
  auto it = labels.find(sha);
  return checkin_name(sha, it == labels.end() ? "" : it->second);
}

DecideReport run_decide(db::Database& db, const ProjectFile& p, const std::filesystem::path& data_dir) {
  auto tracked = tracked_policy(db, p);  // the lineage is recorded only once there is something to decide on
  DecideReport report;
  report.policy_hash = tracked.content_hash;
  auto recipe = builder::load_recipe(p.recipe).take();
  // The repository's first-parent history, or (toolchains only) the
  // toolchains in date order, as drift reads them (sweep/timeline.h).
  std::optional<tracker::GitRepo> repo;
  std::optional<db::Id> repository_id;
  std::vector<tracker::CommitInfo> history;
  if (!p.repo.empty()) {
    repo.emplace(tracker::GitRepo::open(p.repo).take());
    auto tip = repo->tracked(p.branch).take();
    repository_id = recorded_repository(db, *repo, tip);
    history = repo->cloned_history(tip).take();
    if (history.empty()) throw common::Fatal("the branch of " + p.repo + " has no check-ins");
    // As drift reads it: not what was measured after `until`.
    auto trained_sha = tracked.trained_commit.empty() ? common::Result<std::string>(common::Error{""})
                                                      : repo->resolve(tracked.trained_commit);
    history.resize(project_range_end(p, history, trained_sha ? *trained_sha : ""));
    if (history.empty())
      throw common::Fatal("no check-in of " + p.repo + " lies in the project's range (until = \"" + p.until + "\")");
  } else {
    repository_id = db::find_repository(db, toolchains_location(recipe.name));
    history = toolchain_history(p);
    if (history.empty()) throw common::Fatal("project " + p.name + " has neither compiler.repo nor [[toolchains]]");
  }
  report.head = history.back().sha;
  if (!repo) report.labels = toolchain_labels(p);
  std::map<std::string, std::size_t> position;
  for (std::size_t i = 0; i < history.size(); ++i) position[history[i].sha] = i;
  std::optional<std::size_t> baseline_pos;
  if (!tracked.trained_commit.empty()) {
    auto sha = repo ? repo->resolve(tracked.trained_commit) : common::Result<std::string>(tracked.trained_commit);
    if (sha && position.count(*sha)) {
      baseline_pos = position.at(*sha);
      report.baseline = *sha;
      report.baseline_in_history = true;
    }
  }
  if (!baseline_pos) report.baseline = tracked.trained_commit;
  // The project's grid over its whole range: only its samples count as "in
  // a row" (bisection's check-ins between two samples do not).
  // When the range cannot be sampled here (a shallow clone that ends inside
  // it), every evaluated check-in counts, as before there was a grid; so
  // does every toolchain.
  std::set<std::string> grid;
  if (repo)
    if (auto sampled = sweep_checkins(p, p.every, p.since, std::nullopt, baseline_pos ? report.baseline : ""))
      grid.insert(sampled->begin(), sampled->end());
  // What was measured before the project's range (a one-off `eval`,
  // another project's sweep) is no baseline of its own, as drift does not
  // read it either.
  auto from_pos = baseline_pos;
  if (repo)
    if (auto start = project_range_start(p, history, baseline_pos); start > 0) {
      require_range_selects(p, history, start, "decide");
      report.baseline_before_range = baseline_pos && start > *baseline_pos;
      from_pos = start;
    }
  auto rules = p.decide;
  rules.min_drop = p.alerts.min_uplift_change;

  bool any_point = false;
  std::vector<std::pair<std::size_t, DecideReport::NotMeasured>> missing;  // by history position
  // Check-ins swept that gave no evaluation, by their build's outcome: with
  // nothing evaluated, "run a sweep" would be wrong advice after one ran.
  std::map<std::string, std::set<std::string>> unevaluated;
  for (const auto& suite_name : p.suites) {
    auto suite = select_suite(data_dir, suite_name);
    std::map<std::size_t, db::SeriesPoint> points, failed;
    std::set<std::string> recorded;  // a point of the series: measured, or a build or the policy failed there
    for (auto& pt :
         series_of_repository(db, repository_id, recipe.content_hash, tracked.content_hash, suite.manifest_hash)) {
      if (!pt.evaluated && position.count(pt.sha)) unevaluated[pt.build_outcome].insert(pt.sha);
      if (pt.evaluated || !pt.evaluation_error.empty() || (!pt.build_outcome.empty() && pt.build_outcome != "ok"))
        recorded.insert(pt.sha);
      if (auto it = position.find(pt.sha); it != position.end() && (pt.evaluated || !pt.evaluation_error.empty()))
        (pt.evaluated ? points : failed)[it->second] = std::move(pt);
    }
    for (auto& n :
         not_measured(db::unfinished_evaluations(db, p.name, recipe.content_hash, tracked.content_hash,
                                                 suite.manifest_hash, repo ? repo->location().string() : std::string()),
                      position, recorded, from_pos))
      missing.push_back({n.position, {suite.suite.name, n.sha, std::move(n.why)}});
    reports::RetrainSeries series;
    series.suite = suite.suite.name;
    // From the baseline on; without one in the history (a policy trained on
    // another branch), from the first evaluated check-in, which is then the
    // baseline every rule measures from, as the header and the report say.
    // So too for one trained before the project's range (`from`, `since`):
    // sweeps do not measure it there, as that would bisect and alert on
    // history the project left out.
    // After it when it has no evaluation (its build or evaluation failed), as
    // the report reads it (reports::baseline_position).
    std::vector<int> evaluated;
    for (const auto& [pos, pt] : points) evaluated.push_back(int(pos));
    auto first = reports::baseline_position(evaluated, from_pos ? std::optional<int>(int(*from_pos)) : std::nullopt);
    auto base = first ? std::optional<std::size_t>(std::size_t(*first)) : baseline_pos;
    // The policy could not run at all at the newest evaluated check-in: one
    // before the baseline (a full sweep measures a promoted candidate on older
    // check-ins, where features it needs may be missing) is not the policy's
    // failure now.
    if (from_pos) failed.erase(failed.begin(), failed.lower_bound(*from_pos));
    if (!failed.empty() && (points.empty() || failed.rbegin()->first > points.rbegin()->first)) {
      series.unusable_sha = failed.rbegin()->second.sha;
      series.unusable_error = failed.rbegin()->second.evaluation_error;
    }
    series.baseline_measured = base && points.count(*base);
    series.baseline_is_training = series.baseline_measured && baseline_pos && *base == *baseline_pos;
    for (const auto& [pos, pt] : points) {
      if (base && pos < *base) continue;
      auto r = retrain_point(pt, suite.suite.modules.size());
      r.sample = grid.empty() || grid.count(pt.sha) > 0;
      if (series.baseline_measured && pos > *base) {
        auto c = reports::compare_levels(sizes_of(points.at(*base)), sizes_of(pt));
        r.vs_baseline = std::pair{c.before.uplift, c.after.uplift};
      }
      series.points.push_back(std::move(r));
    }
    std::size_t from = baseline_pos ? *baseline_pos : (points.empty() ? history.size() - 1 : points.begin()->first);
    series.age_checkins = static_cast<int>(history.size() - 1 - from);
    series.age_days = double(history.back().time - history[from].time) / 86400.0;
    // An undated toolchain at either end has no age in days (its time 0
    // would read as decades): the rule counts toolchains alone there.
    if (!repo && (history.back().time == 0 || history[from].time == 0)) series.age_days = 0;
    any_point = any_point || !series.points.empty() || !series.unusable_sha.empty();
    report.suites.push_back(reports::decide(series, rules));
    report.series.push_back(std::move(series));
  }
  if (!any_point) {
    std::string tried;
    for (const auto& [outcome, shas] : unevaluated)
      tried += (tried.empty() ? "" : ", ") + std::to_string(shas.size()) + " " +
               (outcome.empty()   ? "not built"
                : outcome == "ok" ? "built, not evaluated"
                                  : outcome);
    throw common::Fatal("no evaluated check-in of project '" + p.name + "' with its policy " +
                        tracked.content_hash.substr(0, 12) +
                        (baseline_pos ? " since its training check-in " + report.baseline.substr(0, 12) : "") +
                        (tried.empty() ? ": run `driftwatch sweep` first"
                                       : ": every check-in swept gave no evaluation (" + tried +
                                             "; `driftwatch report` and `driftwatch jobs` say why)"));
  }
  report.lineage_id = ensure_lineage(db, p, data_dir).lineage_id;
  if (auto row = db::find_lineage(db, p.name, report.lineage_id)) report.policy_name = row->name;
  for (const auto& s : report.suites) {
    if (!s.last.empty() && (report.measured_head.empty() || position.at(s.last) > position.at(report.measured_head)))
      report.measured_head = s.last;
    report.retrain = report.retrain || s.retrain;
    // The range the evidence covers: over every rule that fired, else the whole series.
    for (const auto& o : s.rules) {
      if (!o.fired || o.first.empty()) continue;
      if (report.first.empty() || position.at(o.first) < position.at(report.first)) report.first = o.first;
      if (report.last.empty() || position.at(o.last) > position.at(report.last)) report.last = o.last;
    }
  }
  if (!report.retrain)
    for (const auto& s : report.suites) {
      if (s.first.empty()) continue;
      if (report.first.empty() || position.at(s.first) < position.at(report.first)) report.first = s.first;
      if (report.last.empty() || position.at(s.last) > position.at(report.last)) report.last = s.last;
    }
  // After its own suite's newest measured check-in (none: all of it), the
  // rules of that suite never read it.
  for (auto& [pos, n] : missing) {
    auto s =
        std::find_if(report.suites.begin(), report.suites.end(), [&](const auto& x) { return x.suite == n.suite; });
    n.after_head = s == report.suites.end() || s->last.empty() || pos > position.at(s->last);
    report.not_measured.push_back(std::move(n));
  }
  report.decision_id = db::record_decision(db, p.name, report.lineage_id, report.retrain ? "retrain" : "keep",
                                           report.first, report.last, report.json());
  return report;
}

}  // namespace sweep
