#include "sweep/report.h"

#include <fmt/core.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "builder/recipe.h"
#include "common/atomic_file.h"
#include "common/process.h"
#include "common/text.h"
#include "db/drift.h"
#include "db/jobs.h"
#include "db/policies.h"
#include "policy/model.h"
#include "reports/drift.h"
#include "reports/render.h"
#include "reports/retraining.h"
#include "reports/web_assets.h"
#include "sweep/compat_features.h"
#include "sweep/lineage.h"
#include "sweep/not_measured.h"
#include "sweep/notify.h"
#include "sweep/recording.h"
#include "sweep/series_sizes.h"
#include "sweep/suite_selection.h"
#include "sweep/sweep.h"
#include "sweep/timeline.h"
#include "tracker/git.h"

namespace sweep {
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

/// Report formats and their files: one table.
struct Format {
  const char* name;
  const char* file;
};
constexpr Format kFormats[] = {{"html", "index.html"}, {"md", "report.md"}, {"json", "report.json"}};

std::vector<std::string> strings(const json& d, const char* key) {
  if (d.is_discarded() || !d.contains(key) || !d[key].is_array()) return {};
  std::vector<std::string> out;
  for (const auto& v : d[key])
    if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

reports::PolicyInfo policy_info(const ProjectFile& p) {
  const auto m = policy::read_policy_metadata(p.policy).take();
  reports::PolicyInfo info{m.name, m.content_hash, p.policy, m.compiler_commit, m.corpus, m.created, {}};
  // Without a lineage in the database, the policy file's own metadata is the
  // lineage: itself and the policy it was warm-started from.
  info.lineage.push_back({m.name, m.content_hash, m.compiler_commit, m.created, "active"});
  if (!m.parent.empty()) info.lineage.push_back({"", m.parent, "", "", "warm-started from"});
  return info;
}

// A recorded decision, with one evidence line per rule of each suite (as
// sweep/decide records it) and the rules that fired.
/// `data`: for naming the check-ins of the evidence's range.
reports::Decision decision_of(const db::DecisionRow& row, const reports::ReportData& data) {
  reports::Decision x{row.created_at, row.verdict, "", {}};
  auto ev = nlohmann::json::parse(row.evidence_json, nullptr, false);
  std::set<std::string> fired;
  if (ev.is_object() && ev.contains("suites") && ev["suites"].is_array())
    for (const auto& s : ev["suites"]) {
      auto suite = s.value("suite", std::string());
      // A held suite's rules fired, but they do not decide: not named as fired.
      auto held = s.value("held", std::string());
      if (!held.empty()) x.evidence.push_back(suite + ": kept: " + held);
      if (!s.contains("rules") || !s["rules"].is_array()) continue;
      for (const auto& r : s["rules"]) {
        if (!r.value("enabled", true)) continue;
        auto rule = r.value("rule", std::string());
        bool f = r.value("fired", false);
        if (f && held.empty()) fired.insert(rule);
        auto [measured, threshold] = reports::rule_figures(rule, r.value("unit", std::string()),
                                                           r.value("measured", 0.0), r.value("threshold", 0.0));
        x.evidence.push_back(
            fmt::format("{}: {} measured {}, threshold {}: {}{}", suite, rule, measured, threshold,
                        f ? (held.empty() ? "fired" : "fired, held")
                          : (r.value("evaluated", true) ? "did not fire" : "not evaluated"),
                        r.value("detail", std::string()).empty() ? "" : " (" + r.value("detail", std::string()) + ")"));
      }
    }
  for (const auto& f : fired) x.rule += (x.rule.empty() ? "" : ", ") + f;
  if (!row.first_commit.empty())
    x.evidence.push_back("range " + data.name_of(row.first_commit) + ".." + data.name_of(row.last_commit));
  return x;
}

reports::ReportAlert alert_of(db::Database& db, const db::AlertView& a) {
  reports::ReportAlert r;
  r.id = a.id;
  r.kind = a.kind;
  r.state = a.state;
  r.state_by = a.state_by;
  r.note = a.note;
  r.suite = a.suite;
  r.sentence = alert_sentence(a);
  r.culprit = {a.culprit_sha, a.culprit_author, a.culprit_subject, a.culprit_time};
  r.last_good = a.last_good_sha;
  r.first_bad = a.first_bad_sha;
  r.range_first = a.range_first_sha;
  r.magnitude = a.magnitude;
  r.created_at = a.created_at;
  r.updated_at = a.updated_at;
  auto d = json::parse(a.details_json.empty() ? "{}" : a.details_json, nullptr, false);
  if (!d.is_discarded()) {
    if (d.contains("before")) r.uplift_before = d["before"].value("uplift", 0.0);
    if (d.contains("after")) r.uplift_after = d["after"].value("uplift", 0.0);
    r.bisect_evaluations = d.value("bisect_evaluations", 0);
    r.range_size = d.value("range_size", 0);
    r.spread = d.value("spread", false);
  }
  r.carried = details_carried_forward(a.details_json);
  r.most_affected = strings(d, "most_affected");
  r.win_to_loss = strings(d, "win_to_loss");
  r.loss_to_win = strings(d, "loss_to_win");
  r.failing = strings(d, "failing");
  r.features_missing = strings(d, "features_missing");
  r.features_new = strings(d, "features_new");
  for (const auto& e : db::alert_events(db, a.id)) r.events.push_back({e.state, e.who, e.note, e.at});
  return r;
}

/// One suite's series in first-parent order: evaluated check-ins and failed builds.
reports::SuiteSeries series_of(const evaluator::Suite& suite, const std::string& manifest_hash,
                               std::vector<db::SeriesPoint> loaded,
                               const std::map<std::string, std::size_t>& position) {
  reports::SuiteSeries s{suite.name, manifest_hash, {}, {}};
  // Every module of the suite, measured or not: one that fails at every
  // check-in (a hang the compiler always had) is a column without a value
  // and makes the uplift "over 4 of 5 modules", not a suite shrunk unsaid.
  std::set<std::string> modules;
  for (const auto& m : suite.modules) modules.insert(m.name);
  std::map<std::size_t, db::SeriesPoint> ordered;
  for (auto& p : loaded) {
    auto it = position.find(p.sha);
    // Failed builds and check-ins where the policy could not run stay in the
    // series (without sizes): the page must not end at the last good point.
    if (it == position.end() || (!p.evaluated && p.build_outcome == "ok" && p.evaluation_error.empty())) continue;
    for (const auto& m : p.modules) modules.insert(m.name);
    ordered[it->second] = std::move(p);
  }
  s.modules.assign(modules.begin(), modules.end());
  std::map<std::string, std::size_t> column;
  for (std::size_t j = 0; j < s.modules.size(); ++j) column[s.modules[j]] = j;
  for (auto& [pos, p] : ordered) {
    reports::ReportPoint r;
    r.commit = {p.sha, p.author, p.subject, p.time};
    r.position = int(pos);
    r.build_outcome = p.build_outcome;
    r.evaluated = p.evaluated;
    r.uplift = p.uplift;
    r.total_uplift = p.total_uplift;
    r.total_default = p.total_default;
    r.total_learned = p.total_learned;
    r.wins = p.wins, r.ties = p.ties, r.losses = p.losses;
    r.measured = static_cast<int>(p.modules.size());
    r.learned_failed = p.learned_failed();
    r.evaluation_error = p.evaluation_error;
    if (p.evaluated) {
      r.ratios.assign(s.modules.size(), -1);
      for (const auto& m : p.modules)
        if (m.default_bytes > 0) r.ratios[column.at(m.name)] = double(m.learned_bytes) / double(m.default_bytes);
    }
    s.points.push_back(std::move(r));
  }
  return s;
}

/// Where the compiler's feature set, as the policy saw it, changed between evaluated check-ins.
std::vector<reports::FeatureSetChangeEntry> feature_changes(const std::string& suite,
                                                            const std::vector<db::SeriesPoint>& loaded,
                                                            const reports::SuiteSeries& s) {
  std::map<std::string, const db::SeriesPoint*> by_sha;
  for (const auto& p : loaded) by_sha[p.sha] = &p;
  std::vector<reports::FeatureSets> sets;
  for (const auto& p : s.points) {
    if (!p.evaluated) continue;
    auto features = compat_features(by_sha.at(p.commit.sha)->compat_json);
    sets.push_back({p.commit, std::move(features.lost), std::move(features.added)});
  }
  return reports::feature_set_changes(suite, std::move(sets));
}

}  // namespace

reports::ReportData assemble_report(const ProjectFile& p, const fs::path& data_dir, db::Database& db) {
  if (p.repo.empty() && p.toolchains.empty())
    throw common::Fatal("report needs compiler.repo or [[toolchains]] in the project file: it charts their series");
  reports::ReportData d;
  d.project = p.name;
  d.generated_at = common::iso_utc_now();
  d.commit_url = p.commit_url;
  // A sweep killed or failed before its analysis (or running still) leaves what it
  // measured unanalysed: the alerts are as the sweep before left them.
  if (auto newest = db::newest_sweep(db, p.name); newest && newest->state != "done")
    d.analysis_pending = fmt::format(
        "The newest sweep (#{}, started {}) {}: what it measured is not analysed for drift yet, so the alerts below "
        "may miss a change; the next `driftwatch sweep` analyses it.",
        newest->id, common::utc_for_people(newest->started_at),
        newest->state == "running"  ? "has not finished (it runs still, or was killed)"
        : newest->state == "failed" ? "failed before it finished (" + newest->message + ")"
                                    : "was " + newest->state + " before it finished");
  // The tracked (active) policy of the lineage; its lineage from the database when the project has one.
  d.policy = policy_info(with_tracked_policy(db, p));
  if (auto rows = db::list_lineage(db, p.name); !rows.empty()) {
    d.policy.lineage.clear();
    d.policy.lineage_recorded = true;
    for (int pass = 0; pass < 2; ++pass)  // the active policy first, then the others newest first
      for (auto it = rows.rbegin(); it != rows.rend(); ++it)
        if ((it->state == "active") == (pass == 0))
          d.policy.lineage.push_back({it->name, it->content_hash, it->trained_commit, it->created_at,
                                      it->reason.empty() ? it->state : it->state + ": " + it->reason});
  }
  auto recipe = builder::load_recipe(p.recipe).take();
  // The repository's first-parent history, or (toolchains only) the
  // toolchains in date order, as drift reads them (sweep/timeline.h).
  std::optional<db::Id> repository_id;
  std::vector<tracker::CommitInfo> history;
  std::string repo_location;  // as sweeps plan jobs: their evaluations' payloads name it
  if (!p.repo.empty()) {
    auto repo = tracker::GitRepo::open(p.repo).take();
    repo_location = repo.location().string();
    // As sweep and decide read it: a policy's metadata may name its training
    // check-in by a short sha or a tag.
    if (auto sha = repo.resolve(d.policy.trained_at); sha && !d.policy.trained_at.empty()) d.policy.trained_at = *sha;
    auto tip = repo.tracked(p.branch).take();
    repository_id = recorded_repository(db, repo, tip);
    history = repo.cloned_history(tip).take();
    // As drift reads it: not what was measured after `until`.
    history.resize(project_range_end(p, history, d.policy.trained_at));
  } else {
    repository_id = db::find_repository(db, toolchains_location(recipe.name));
    history = toolchain_history(p);
  }
  // Toolchains are named by their labels and never linked as commits, also
  // in a project that charts its repository and lists the toolchains' alerts.
  d.toolchain_labels = toolchain_labels(p);
  std::map<std::string, std::size_t> position;
  for (std::size_t i = 0; i < history.size(); ++i) position[history[i].sha] = i;
  std::set<std::string> failed;
  bool trained_in_series = false, any_measured = false, any_before_training = false;
  // Where the training check-in is not in the history (another branch), every
  // series starts from its first evaluated check-in, as in `decide`.
  std::optional<int> trained_position;
  if (auto it = position.find(d.policy.trained_at); it != position.end()) trained_position = int(it->second);
  // What was measured before the project's range (a one-off `eval`, another
  // project's sweep) is no baseline of its own, as in decide and drift.
  std::optional<int> from_position = trained_position;
  if (!p.repo.empty())
    if (auto start = project_range_start(
            p, history, trained_position ? std::optional<std::size_t>(*trained_position) : std::nullopt);
        start > 0) {
      if (p.toolchains.empty()) require_range_selects(p, history, start, "the report");
      from_position = int(start);
    }
  for (const auto& name : p.suites) {
    auto suite = select_suite(data_dir, name);
    auto loaded =
        series_of_repository(db, repository_id, recipe.content_hash, d.policy.content_hash, suite.manifest_hash);
    auto s = series_of(suite.suite, suite.manifest_hash, loaded, position);
    // The charts begin where the project's range does, as its `until` ends
    // them: a check-in before it that another project (or an `eval`)
    // measured is not this project's point.
    if (from_position)
      std::erase_if(s.points, [&](const reports::ReportPoint& pt) { return pt.position < *from_position; });
    for (const auto& pt : s.points)
      if (pt.build_outcome != "ok" && failed.insert(pt.commit.sha).second)
        d.build_failures.push_back({s.name, pt.commit, pt.build_outcome});
    for (auto& f : feature_changes(s.name, loaded, s)) d.feature_changes.push_back(std::move(f));
    reports::SuiteOverview o{s.name, {}, {}, 0, 0, false, {}};
    int last_measured = -1;  // position of the latest measured check-in
    if (auto b = reports::baseline_index(s, from_position)) {
      const auto& base = s.points[*b];
      trained_in_series = trained_in_series || base.commit.sha == d.policy.trained_at;
      const reports::ReportPoint* latest = nullptr;
      for (const auto& pt : s.points)
        if (pt.evaluated) latest = &pt;
      o = {s.name, base.commit, latest->commit, base.uplift, latest->uplift, true, {}, 0};
      o.latest_measured = latest->measured;
      o.modules = static_cast<int>(s.modules.size());
      // The change as decide reads it: over the modules both check-ins measured.
      auto at = [&](const std::string& sha) {
        return std::find_if(loaded.begin(), loaded.end(), [&](const auto& p) { return p.sha == sha; });
      };
      if (auto b0 = at(base.commit.sha), b1 = at(latest->commit.sha); b0 != loaded.end() && b1 != loaded.end()) {
        auto c = reports::compare_levels(sizes_of(*b0), sizes_of(*b1));
        o.change = c.after.uplift - c.before.uplift;
      } else {
        o.change = latest->uplift - base.uplift;
      }
      last_measured = latest->position;
      any_measured = true;
    } else if (std::any_of(s.points.begin(), s.points.end(), [](const auto& pt) { return pt.evaluated; })) {
      any_before_training = true;  // measured, but only before the training check-in: no baseline
    } else if (std::none_of(loaded.begin(), loaded.end(), [](const auto& p) { return p.build_outcome == "ok"; })) {
      // Built check-ins not evaluated on this suite (a suite just added, a
      // policy just promoted) are not swept yet, whatever failed elsewhere.
      o.tried = static_cast<int>(s.points.size());
    }
    // Where the policy stopped running: the first such check-in after the
    // latest measured one, or of all when none was measured.
    for (const auto& pt : s.points)
      if (pt.position > last_measured && pt.position >= from_position.value_or(INT_MIN) &&
          !pt.evaluation_error.empty()) {
        o.unusable_since = pt.commit;
        break;
      }
    // Sampled check-ins with no point: the series, and its latest, would
    // otherwise end before them unsaid.
    std::set<std::string> recorded;
    for (const auto& pt : s.points) recorded.insert(pt.commit.sha);
    for (auto& n :
         not_measured(db::unfinished_evaluations(db, p.name, recipe.content_hash, d.policy.content_hash,
                                                 suite.manifest_hash, repo_location),
                      position, recorded, from_position ? std::optional<std::size_t>(*from_position) : std::nullopt)) {
      const auto& c = history[n.position];
      reports::CommitRef commit{c.sha, c.author, c.subject, c.time};
      if (int(n.position) > last_measured) {
        ++o.not_measured_after;
        o.newest_not_measured = commit;
      }
      d.not_measured.push_back({s.name, commit, std::move(n.why)});
    }
    d.overview.push_back(std::move(o));
    d.suites.push_back(std::move(s));
  }
  // The training check-in lies before the project's range: drift starts at the range.
  const bool range_after_training = from_position && trained_position && *from_position > *trained_position;
  if (!any_measured && range_after_training && any_before_training)
    d.baseline_note = "nothing measured in the project's range yet";
  else if (!any_measured && trained_position && any_before_training)
    d.baseline_note =
        "nothing measured since the check-in the policy was trained at (" + d.policy.trained_at.substr(0, 12) + ")";
  else if (!any_measured)
    d.baseline_note = "nothing measured yet";
  else if (trained_in_series)
    d.baseline_note = "the check-in the policy was trained at (" + d.policy.trained_at.substr(0, 12) + ")";
  else if (d.policy.trained_at.empty())
    d.baseline_note = "the first swept check-in: the policy names no check-in it was trained at";
  else if (range_after_training)
    d.baseline_note =
        "the first check-in evaluated in the project's range, which begins after the one the policy "
        "was trained at (" +
        d.policy.trained_at.substr(0, 12) + ")";
  else if (position.count(d.policy.trained_at))
    d.baseline_note = "the first check-in evaluated after the one the policy was trained at (" +
                      d.policy.trained_at.substr(0, 12) +
                      "), which has no evaluation here (its build or evaluation failed)";
  else
    d.baseline_note = "the first swept check-in: the check-in the policy was trained at (" +
                      d.policy.trained_at.substr(0, 12) + ") is not in the swept first-parent history";
  // The tracked policy's alerts: an earlier policy's (before a promotion)
  // would mark its changes on this policy's charts and count as its open
  // alerts. `driftwatch alerts` lists every policy's.
  // The same for a suite rebuilt under its name and for a changed recipe:
  // the old builds' alerts are about a series the report no longer draws.
  std::set<std::string> charted;
  for (const auto& s : d.suites) charted.insert(s.manifest_hash);
  for (const auto& a : db::list_alerts(db, p.name, {}))
    if ((a.policy_hash.empty() || a.policy_hash == d.policy.content_hash) &&
        (a.suite_manifest_hash.empty() || charted.count(a.suite_manifest_hash)) &&
        (a.recipe_hash.empty() || a.recipe_hash == recipe.content_hash)) {
      // A toolchain taken off the list since: named by what was recorded.
      for (const auto& [sha, label] : {std::pair{a.culprit_sha, a.culprit_subject},
                                       {a.last_good_sha, a.last_good_subject},
                                       {a.first_bad_sha, a.first_bad_subject},
                                       {a.range_first_sha, a.range_first_subject}})
        if (is_toolchain_id(sha)) d.toolchain_labels.emplace(sha, label.empty() ? "(no label)" : label);
      d.alerts.push_back(alert_of(db, a));
    }
  // Likewise the decisions: a "retrain" about the policy a promotion retired
  // says nothing of the one tracked now.
  // The latest check-in measured on any suite: a decision that judged an
  // older head is said to be so.
  std::optional<std::size_t> latest;
  std::string latest_sha;
  // (Where the policy stopped running, that check-in is measured too.)
  for (const auto& o : d.overview)
    for (const auto& sha : {o.measured ? o.latest.sha : std::string(), o.unusable_since.sha})
      if (auto it = position.find(sha); !sha.empty() && it != position.end() && (!latest || it->second > *latest))
        latest = it->second, latest_sha = sha;
  for (const auto& row : db::list_decisions(db, p.name)) {
    auto ev = nlohmann::json::parse(row.evidence_json, nullptr, false);
    auto hash = ev.is_object() ? ev.value("policy_hash", std::string()) : std::string();
    if (!hash.empty() && hash != d.policy.content_hash) continue;
    auto x = decision_of(row, d);
    // The newest check-in it read (not its evidence's range, which ends
    // where the rules that fired do).
    auto head = ev.is_object() ? ev.value("measured_head", row.last_commit) : row.last_commit;
    if (auto judged = position.find(head); latest && judged != position.end() && judged->second < *latest)
      x.stale = "judged at " + d.name_of(head) + ", older than the latest check-in measured, " + d.name_of(latest_sha) +
                ": run `driftwatch decide` for the head";
    d.decisions.push_back(std::move(x));
  }
  return d;
}

common::Result<std::vector<std::string>> report_files(const std::vector<std::string>& formats) {
  std::vector<std::string> out;
  for (const auto& f : formats) {
    const Format* found = nullptr;
    for (const auto& k : kFormats)
      if (f == k.name) found = &k;
    if (!found) return common::Error{"unknown report format '" + f + "' (html, md or json)"};
    out.push_back(found->file);
  }
  if (out.empty()) return common::Error{"no report format given (html, md or json)"};
  return out;
}

namespace {

/// A file a killed `report` was writing (`index.html.tmp-PID-N-R`), which
/// would otherwise stay beside the report for good: removed once its writer
/// is gone here and it is a minute old, or, whoever wrote it (the directory
/// may be shared), once nothing touched it for an hour.
void remove_abandoned_scratch(const fs::path& dir) {
  std::error_code ec;
  auto now = fs::file_time_type::clock::now();
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    auto name = e.path().filename().string();
    auto at = name.find(".tmp-");
    if (at == std::string::npos || !e.is_regular_file(ec)) continue;
    auto age = now - fs::last_write_time(e.path(), ec);
    if (ec) continue;
    long pid = std::strtol(name.c_str() + at + 5, nullptr, 10);
    bool gone = pid > 0 && common::process_gone_here(common::host_name(), common::pid_namespace(), pid);
    if ((gone && age > std::chrono::minutes(1)) || age > std::chrono::hours(1)) fs::remove(e.path(), ec);
  }
}

}  // namespace

common::Result<std::vector<fs::path>> write_report(const reports::ReportData& data, const fs::path& dir,
                                                   std::vector<std::string> formats) {
  std::error_code ec;
  // The formats an earlier report left here are written again from the same
  // data: removing them lost a reader's HTML to a `--format md` for an
  // email, and leaving them would show the last run's page beside this one.
  for (const auto& k : kFormats)
    if (fs::is_regular_file(dir / k.file, ec) && std::find(formats.begin(), formats.end(), k.name) == formats.end())
      formats.push_back(k.name);
  auto files = report_files(formats);
  if (!files) return files.error();
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) return common::Error{dir.string() + " exists and is not a directory"};
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      auto name = e.path().filename().string();
      bool known = false;  // a report's file, or one a killed run was writing atomically
      for (const auto& k : kFormats)
        known = known || name == k.file || name.rfind(std::string(k.file) + ".tmp-", 0) == 0;
      if (!known || !e.is_regular_file(ec))
        return common::Error{dir.string() + " holds something other than a report ('" + name +
                             "'): refusing to overwrite it; give a new or empty directory"};
    }
    if (ec) return common::Error{"cannot read " + dir.string() + ": " + ec.message()};
    remove_abandoned_scratch(dir);
  } else if (!fs::create_directories(dir, ec) && ec) {
    return common::Error{"cannot create " + dir.string() + ": " + ec.message()};
  }
  // Replaced as a set: a reader never finds this run's HTML beside the last
  // run's JSON.
  std::vector<std::pair<fs::path, std::string>> texts;
  std::vector<fs::path> written;
  for (std::size_t i = 0; i < formats.size(); ++i) {
    written.push_back(dir / (*files)[i]);
    texts.emplace_back(written.back(), formats[i] == "html" ? reports::render_html(data, reports::web_assets())
                                       : formats[i] == "md" ? reports::render_markdown(data)
                                                            : reports::render_json(data));
  }
  auto st = common::write_files_atomically(texts);
  if (!st) return st.error();
  return written;
}

}  // namespace sweep
