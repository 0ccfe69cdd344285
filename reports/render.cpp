#include "reports/render.h"

#include <fmt/core.h>

#include <cmath>
#include <ctime>
#include <nlohmann/json.hpp>
#include <set>

#include "common/json_text.h"
#include "common/text.h"
#include "reports/drift.h"

namespace reports {
using json = nlohmann::json;

namespace {

std::string date_of(std::int64_t t) {
  if (t == 0) return "";
  std::time_t tt = t;
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

/// After a suite's latest uplift: the sampled check-ins after it whose
/// evaluation did not finish, so that the line is not read as the head's.
std::string not_measured_note(const ReportData& d, const SuiteOverview& o) {
  if (!o.measured || o.not_measured_after == 0) return "";
  return fmt::format("; {} later sampled check-in(s) not measured, the newest {} (see \"Not measured\")",
                     o.not_measured_after, d.name_of(o.newest_not_measured.sha));
}

std::string short_sha(const std::string& sha) { return sha.substr(0, 12); }

/// At most `n` bytes of UTF-8 text, cut at a character boundary, "…" when cut.
std::string clipped(const std::string& s, std::size_t n) {
  if (s.size() <= n) return s;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n) + "…";
}
double rounded(double x) { return std::round(x * 1e6) / 1e6; }

json commit_json(const CommitRef& c) {
  return {{"sha", c.sha}, {"author", c.author}, {"subject", c.subject}, {"time", c.time}, {"date", date_of(c.time)}};
}

json point_json(const ReportPoint& p) {
  json ratios = json::array();
  for (double r : p.ratios) ratios.push_back(r < 0 ? json(nullptr) : json(rounded(r)));
  // A check-in with no evaluation (its build broke, the policy could not
  // run) has no figures: null, never a 0 a reader would plot.
  auto figure = [&](auto value) { return p.evaluated ? json(value) : json(nullptr); };
  return {{"sha", p.commit.sha},
          {"author", p.commit.author},
          {"subject", p.commit.subject},
          {"time", p.commit.time},
          {"date", date_of(p.commit.time)},
          {"position", p.position},
          {"build_outcome", p.build_outcome},
          {"evaluated", p.evaluated},
          {"uplift", figure(p.uplift)},
          {"total_uplift", figure(p.total_uplift)},
          {"total_default", figure(p.total_default)},
          {"total_learned", figure(p.total_learned)},
          {"wins", figure(p.wins)},
          {"ties", figure(p.ties)},
          {"losses", figure(p.losses)},
          {"measured", figure(p.measured)},
          {"learned_failed", figure(p.learned_failed)},
          {"evaluation_error", p.evaluation_error},
          {"ratios", ratios}};
}

json alert_json(const ReportAlert& a) {
  json events = json::array();
  for (const auto& e : a.events) events.push_back({{"state", e.state}, {"who", e.who}, {"note", e.note}, {"at", e.at}});
  return {{"id", a.id},
          {"kind", a.kind},
          {"state", a.state},
          {"state_by", a.state_by},
          {"note", a.note},
          {"suite", a.suite},
          {"sentence", a.sentence},
          {"culprit", commit_json(a.culprit)},
          {"last_good", a.last_good},
          {"first_bad", a.first_bad},
          {"range_first", a.range_first},
          {"spread", a.spread},
          {"magnitude", a.magnitude},
          {"uplift_before", a.uplift_before},
          {"uplift_after", a.uplift_after},
          {"most_affected", a.most_affected},
          {"win_to_loss", a.win_to_loss},
          {"loss_to_win", a.loss_to_win},
          {"failing", a.failing},
          {"features_missing", a.features_missing},
          {"features_new", a.features_new},
          {"bisect_evaluations", a.bisect_evaluations},
          {"range_size", a.range_size},
          {"created_at", a.created_at},
          {"updated_at", a.updated_at},
          {"events", events}};
}

json report_json(const ReportData& d) {
  json lineage = json::array();
  for (const auto& l : d.policy.lineage)
    lineage.push_back({{"name", l.name},
                       {"content_hash", l.content_hash},
                       {"trained_at", l.trained_at},
                       {"created", l.created},
                       {"note", l.note}});
  json overview = json::array();
  for (const auto& o : d.overview)
    overview.push_back(
        {{"suite", o.suite},
         {"measured", o.measured},
         {"baseline", commit_json(o.baseline)},
         {"latest", commit_json(o.latest)},
         {"baseline_uplift", o.baseline_uplift},
         {"latest_uplift", o.latest_uplift},
         {"change", o.change},
         {"latest_modules_measured", o.latest_measured},
         {"modules", o.modules},
         {"unusable_since", o.unusable_since.sha.empty() ? json(nullptr) : commit_json(o.unusable_since)},
         {"not_measured_after", o.not_measured_after},
         {"newest_not_measured",
          o.newest_not_measured.sha.empty() ? json(nullptr) : commit_json(o.newest_not_measured)},
         {"unmeasured", o.measured ? "" : o.unmeasured_text()}});
  json suites = json::array();
  for (const auto& s : d.suites) {
    json points = json::array();
    for (const auto& p : s.points) points.push_back(point_json(p));
    suites.push_back({{"name", s.name},
                      {"manifest_hash", s.manifest_hash},
                      {"modules", s.modules},
                      {"evaluated", s.evaluated()},
                      {"points", points}});
  }
  json alerts = json::array();
  for (const auto& a : d.alerts) alerts.push_back(alert_json(a));
  json decisions = json::array();
  for (const auto& x : d.decisions)
    decisions.push_back({{"at", x.at},
                         {"verdict", x.verdict},
                         {"rule", x.rule},
                         {"evidence", x.evidence},
                         {"stale", x.stale.empty() ? json(nullptr) : json(x.stale)}});
  json failures = json::array();
  for (const auto& f : d.build_failures)
    failures.push_back({{"suite", f.suite}, {"commit", commit_json(f.commit)}, {"outcome", f.outcome}});
  json not_measured = json::array();
  for (const auto& n : d.not_measured)
    not_measured.push_back({{"suite", n.suite}, {"commit", commit_json(n.commit)}, {"why", n.why}});
  json features = json::array();
  for (const auto& f : d.feature_changes)
    features.push_back({{"suite", f.suite},
                        {"at", commit_json(f.at)},
                        {"missing", f.missing},
                        {"added", f.added},
                        {"newly_missing", f.newly_missing},
                        {"sent_again", f.sent_again},
                        {"newly_added", f.newly_added},
                        {"no_longer_added", f.no_longer_added}});
  return {{"schema_version", ReportData::kSchemaVersion},
          {"generated_at", d.generated_at},
          {"project", d.project},
          {"commit_url", d.commit_url},
          {"empty", d.empty()},
          {"analysis_pending", d.analysis_pending},
          {"open_alerts", d.open_alerts()},
          {"acknowledged_alerts", d.acknowledged_alerts()},
          {"policy",
           {{"name", d.policy.name},
            {"content_hash", d.policy.content_hash},
            {"path", d.policy.path},
            {"trained_at", d.policy.trained_at},
            {"corpus", d.policy.corpus},
            {"created", d.policy.created},
            {"lineage", lineage}}},
          {"baseline_note", d.baseline_note},
          {"overview", overview},
          {"suites", suites},
          {"alerts", alerts},
          {"decisions", decisions},
          {"build_failures", failures},
          {"not_measured", not_measured},
          {"feature_changes", features},
          {"toolchain_labels", d.toolchain_labels}};
}

std::string dump(const json& j, int indent) { return common::json_text(j, indent); }

// ---- Markdown ----

std::string md_commit(const ReportData& d, const std::string& sha) {
  if (sha.empty()) return "";
  auto link = d.toolchain_labels.count(sha) ? "" : commit_link(d.commit_url, sha);
  auto text = "`" + d.name_of(sha) + "`";
  return link.empty() ? text : "[" + text + "](" + link + ")";
}

const char* kNoDecision = "No retraining decision recorded yet.";

std::string md_decision(const ReportData& d) {
  if (d.decisions.empty()) return std::string(kNoDecision) + "\n";
  const auto& x = d.decisions.front();
  std::string out =
      fmt::format("**{}** ({}){}\n\n", markdown_escape(x.verdict), markdown_escape(common::utc_for_people(x.at)),
                  x.rule.empty() ? "" : ", rule: " + markdown_escape(x.rule));
  if (!x.stale.empty()) out += "*Out of date: " + markdown_escape(x.stale) + ".*\n\n";
  for (const auto& e : x.evidence) out += "- " + markdown_escape(e) + "\n";
  return out;
}

// ---- HTML ----

std::string h(std::string_view s) { return html_escape(s); }

std::string html_commit(const ReportData& d, const std::string& sha) {
  if (sha.empty()) return "";
  auto link = d.toolchain_labels.count(sha) ? "" : commit_link(d.commit_url, sha);
  auto code = "<code>" + h(d.name_of(sha)) + "</code>";
  return link.empty() ? code : "<a href=\"" + h(link) + "\" rel=\"noopener noreferrer\">" + code + "</a>";
}

std::string html_table(const std::vector<std::string>& head, const std::vector<std::vector<std::string>>& rows,
                       const std::string& id, const std::string& empty_text) {
  if (rows.empty()) return "<p class=\"empty\">" + h(empty_text) + "</p>\n";
  std::string out = "<table id=\"" + id + "\"><thead><tr>";
  for (const auto& c : head) out += "<th>" + h(c) + "</th>";
  out += "</tr></thead><tbody>\n";
  for (const auto& r : rows) {
    out += "<tr>";
    for (const auto& c : r) out += "<td>" + c + "</td>";  // cells are markup built with h()
    out += "</tr>\n";
  }
  return out + "</tbody></table>\n";
}

std::string html_list(const std::vector<std::string>& items) {
  std::string out;
  // "; " as the Markdown: an entry holds ", " itself ("default 759 → 668 B, learned …").
  for (const auto& i : items) out += (out.empty() ? "" : "; ") + h(i);
  return out;
}

std::string html_overview(const ReportData& d) {
  std::string out = "<section id=\"overview\"><h2>Overview</h2>\n<dl>";
  out += "<dt>Active policy</dt><dd>" + h(d.policy.name) + " <code>" + h(short_sha(d.policy.content_hash)) +
         "</code>, trained at " + html_commit(d, d.policy.trained_at) + "</dd>";
  out += "<dt>Lineage</dt><dd>";
  for (std::size_t i = 0; i < d.policy.lineage.size(); ++i) {
    const auto& l = d.policy.lineage[i];
    // From the database not an ancestry: after the first (the active
    // policy), the project's other policies, newest first, each with its
    // state (a rejected or rolled-back candidate is no parent of anything).
    // From the policy file, what it was warm-started from.
    const char* next = !d.policy.lineage_recorded ? " ← " : i == 1 ? "; then, newest first: " : "; ";
    out += std::string(i == 0 ? "" : next) + h(l.name) + " <code>" + h(short_sha(l.content_hash)) + "</code>" +
           (l.note.empty() ? "" : " (" + h(l.note) + ")");
  }
  out += "</dd>";
  out += "<dt>Baseline</dt><dd>" + h(d.baseline_note) + "</dd>";
  out += "<dt>Open alerts</dt><dd id=\"open-alerts\">" + h(d.open_alerts_text()) + "</dd>";
  out += "<dt>Last retraining decision</dt><dd>" +
         (d.decisions.empty()
              ? h(kNoDecision)
              : h(d.decisions.front().verdict) + " (" + h(common::utc_for_people(d.decisions.front().at)) + ")" +
                    (d.decisions.front().stale.empty()
                         ? std::string()
                         : " <strong class=\"stale\">out of date: " + h(d.decisions.front().stale) + "</strong>")) +
         "</dd></dl>\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& o : d.overview) {
    if (!o.measured) {
      rows.push_back({h(o.suite), h(o.unmeasured_text()), "", "", ""});
      continue;
    }
    rows.push_back({h(o.suite), html_commit(d, o.baseline.sha) + " " + h(date_of(o.baseline.time)),
                    h(common::signed_percent(o.baseline_uplift)),
                    html_commit(d, o.latest.sha) + " " + h(date_of(o.latest.time)),
                    "<b>" + h(common::signed_percent(o.latest_uplift)) + "</b>" + h(o.partial_text()) + " (" +
                        h(o.change_text()) + ")" + h(not_measured_note(d, o)) +
                        (o.unusable_since.sha.empty()
                             ? std::string()
                             : "<br><b>the policy cannot run since " + html_commit(d, o.unusable_since.sha) + " " +
                                   h(date_of(o.unusable_since.time)) + "</b>")});
  }
  out += html_table({"suite", "baseline", "uplift then", "latest", "uplift now (change)"}, rows, "overview-table",
                    "No suite in the project.");
  return out + "</section>\n";
}

std::string html_alerts(const ReportData& d) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& a : d.alerts) {
    std::string where = !a.culprit.sha.empty()
                            ? html_commit(d, a.culprit.sha) + " " +
                                  (d.toolchain_labels.count(a.culprit.sha) ? "" : h(a.culprit.subject)) +
                                  "<br><small>" + h(a.culprit.author) + ", " + h(date_of(a.culprit.time)) + "</small>"
                        : !a.range_first.empty()
                            ? (a.spread ? "" : "one of ") + html_commit(d, a.range_first) + ".." +
                                  html_commit(d, a.first_bad) +
                                  (a.spread ? " <small>(" + h(kSpreadNote) + ")</small>" : "")
                            : html_commit(d, a.first_bad) + " <small>(" + h(kNotPinnedNote) + ")</small>";
    std::string evidence = h(a.sentence);
    // A failing module has no size to move: the modules that moved most are
    // another matter than the alert's.
    if (!a.failing.empty()) evidence += "<br><small>failing: " + html_list(a.failing) + "</small>";
    else if (!a.most_affected.empty())
      evidence += "<br><small>modules moved most: " + html_list(a.most_affected) + "</small>";
    if (!a.win_to_loss.empty()) evidence += "<br><small>win → loss: " + html_list(a.win_to_loss) + "</small>";
    std::string history;
    for (const auto& e : a.events)
      history += (history.empty() ? "" : "<br>") + h(common::utc_for_people(e.at)) + " " + h(e.state) + " by " +
                 h(e.who) + (e.note.empty() ? "" : ": " + h(e.note));
    rows.push_back({std::to_string(a.id), "<span class=\"state-" + h(a.state) + "\">" + h(a.state) + "</span>",
                    h(a.kind), h(a.suite), where, evidence, "<small>" + history + "</small>"});
  }
  return "<section id=\"alerts\"><h2>Alerts</h2>\n" +
         (d.analysis_pending.empty() ? std::string() : "<p class=\"stale\">" + h(d.analysis_pending) + "</p>\n") +
         html_table({"id", "state", "kind", "suite", "culprit", "evidence", "history"}, rows, "alerts-table",
                    d.analysis_pending.empty() ? "No alerts: no change of the uplift or the sizes was found."
                                               : "No alerts so far.") +
         "</section>\n";
}

std::string html_tables(const ReportData& d) {
  std::string out = "<section id=\"decisions\"><h2>Retraining decisions</h2>\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& x : d.decisions) {
    std::string ev;
    for (const auto& e : x.evidence) ev += (ev.empty() ? "" : "<br>") + h(e);
    rows.push_back({h(common::utc_for_people(x.at)), h(x.verdict), h(x.rule), ev});
  }
  out += html_table({"when", "decision", "rule", "evidence"}, rows, "decisions-table", kNoDecision);
  out += "</section>\n<section id=\"build-failures\"><h2>Build failures</h2>\n";
  rows.clear();
  for (const auto& f : d.build_failures)
    rows.push_back({h(f.suite), html_commit(d, f.commit.sha), h(date_of(f.commit.time)), h(f.commit.subject),
                    h(f.commit.author), h(f.outcome)});
  out += html_table({"suite", "check-in", "date", "subject", "author", "outcome"}, rows, "build-failures-table",
                    "Every recorded check-in built.");
  out += "</section>\n<section id=\"not-measured\"><h2>Not measured</h2>\n";
  rows.clear();
  for (const auto& n : d.not_measured)
    rows.push_back(
        {h(n.suite), html_commit(d, n.commit.sha), h(date_of(n.commit.time)), h(n.commit.subject), h(n.why)});
  out += html_table({"suite", "check-in", "date", "subject", "why"}, rows, "not-measured-table",
                    "Every sampled check-in has a result (or a recorded build failure).");
  out += "</section>\n<section id=\"feature-changes\"><h2>Feature-set changes</h2>\n";
  rows.clear();
  for (const auto& f : d.feature_changes) {
    std::string change;
    for (const auto& [what, items] :
         {std::pair<const char*, const std::vector<std::string>*>{"missing from here", &f.newly_missing},
          {"sent again", &f.sent_again},
          {"new", &f.newly_added},
          {"no longer sent", &f.no_longer_added}})
      if (!items->empty()) change += (change.empty() ? "" : "<br>") + std::string(what) + ": " + html_list(*items);
    rows.push_back(
        {h(f.suite), html_commit(d, f.at.sha), h(f.at.subject), change, html_list(f.missing), html_list(f.added)});
  }
  out += html_table({"suite", "check-in", "subject", "change", "all missing there", "all new there"}, rows,
                    "feature-changes-table", "The compiler's feature set did not change across the series.");
  return out + "</section>\n";
}

}  // namespace

std::string render_json(const ReportData& data) { return dump(report_json(data), 2) + "\n"; }

std::string render_markdown(const ReportData& d) {
  std::string out = "# Drift report: " + markdown_escape(d.project) + "\n\n";
  out += fmt::format("Generated {}. Active policy **{}** (`{}`), trained at {}.\n\n",
                     markdown_escape(common::utc_for_people(d.generated_at)), markdown_escape(d.policy.name),
                     short_sha(d.policy.content_hash),
                     d.policy.trained_at.empty() ? "an unknown check-in" : md_commit(d, d.policy.trained_at));
  if (d.empty())
    return out + "**Nothing measured yet**: no check-in of this project has been swept. Run `driftwatch sweep`.\n";
  out += "Baseline: " + markdown_escape(d.baseline_note) + "\n\n## Uplift\n\n";
  out += "| suite | baseline | uplift then | latest | uplift now | change |\n|---|---|---|---|---|---|\n";
  for (const auto& o : d.overview) {
    if (!o.measured) {
      out += "| " + markdown_escape(o.suite) + " | " + markdown_escape(o.unmeasured_text()) + " | | | | |\n";
      continue;
    }
    out +=
        fmt::format("| {} | {} {} | {} | {} {} | {} | {} |\n", markdown_escape(o.suite), md_commit(d, o.baseline.sha),
                    date_of(o.baseline.time), common::signed_percent(o.baseline_uplift), md_commit(d, o.latest.sha),
                    date_of(o.latest.time), common::signed_percent(o.latest_uplift) + o.partial_text(),
                    o.change_text() + markdown_escape(not_measured_note(d, o)) +
                        (o.unusable_since.sha.empty()
                             ? std::string()
                             : "; **the policy cannot run since " + md_commit(d, o.unusable_since.sha) + "**"));
  }
  out += "\n## Alerts — open: " + d.open_alerts_text() + "\n\n";
  if (!d.analysis_pending.empty()) out += "*" + markdown_escape(d.analysis_pending) + "*\n\n";
  if (d.alerts.empty())
    out += d.analysis_pending.empty() ? "No alerts: no change of the uplift or the sizes was found.\n"
                                      : "No alerts so far.\n";
  for (const auto& a : d.alerts) {
    out += fmt::format("### #{} {} ({}) on {}\n\n{}\n\n", a.id, markdown_escape(a.kind), markdown_escape(a.state),
                       markdown_escape(a.suite), markdown_escape(a.sentence));
    if (!a.culprit.sha.empty())
      out += d.toolchain_labels.count(a.culprit.sha)
                 ? fmt::format("- culprit: {} ({})\n", md_commit(d, a.culprit.sha), date_of(a.culprit.time))
                 : fmt::format("- culprit: {} {} ({}, {})\n", md_commit(d, a.culprit.sha),
                               markdown_escape(a.culprit.subject), markdown_escape(a.culprit.author),
                               date_of(a.culprit.time));
    else if (!a.range_first.empty())
      out += std::string(a.spread ? "- changed over: " : "- culprit: one of ") + md_commit(d, a.range_first) + " .. " +
             md_commit(d, a.first_bad) + " (" + reports::range_note(a.spread, a.carried) + ")\n";
    else
      out += "- not pinned: " + md_commit(d, a.first_bad) + " (" + reports::kNotPinnedNote + ")\n";
    // Only a change between two measured levels has an uplift on both sides.
    bool levels = a.kind != "build-broken" && a.kind != "policy-unusable";
    if (levels)
      out += "- between " + md_commit(d, a.last_good) + " and " + md_commit(d, a.first_bad) +
             fmt::format(": uplift {} → {}", common::signed_percent(a.uplift_before),
                         common::signed_percent(a.uplift_after));
    else
      out += "- first bad " + md_commit(d, a.first_bad) +
             (a.last_good.empty() ? std::string() : ", last good " + md_commit(d, a.last_good));
    if (a.bisect_evaluations > 0)
      out += fmt::format(", bisected in {} evaluation(s) over {} check-in(s)", a.bisect_evaluations, a.range_size);
    out += "\n";
    auto md_list = [&](const char* what, const std::vector<std::string>& items) {
      if (items.empty()) return;
      out += std::string("- ") + what + ":";
      // Separated, not ended: "a; b", no stray ";" after the last.
      for (std::size_t i = 0; i < items.size(); ++i) out += (i ? "; " : " ") + markdown_escape(items[i]);
      out += "\n";
    };
    md_list(a.kind == "compiler-failing" ? "failing under the default heuristic" : "failing under the policy",
            a.failing);
    if (a.failing.empty()) md_list("modules moved most", a.most_affected);
    md_list("turned from win to loss", a.win_to_loss);
    md_list("features missing", a.features_missing);
    md_list("features new", a.features_new);
    for (const auto& e : a.events)
      out += "- " + markdown_escape(common::utc_for_people(e.at)) + " " + markdown_escape(e.state) + " by " +
             markdown_escape(e.who) + (e.note.empty() ? "" : ": " + markdown_escape(e.note)) + "\n";
    out += "\n";
  }
  out += "## Retraining decision\n\n" + md_decision(d);
  if (!d.build_failures.empty()) {
    out += "\n## Build failures\n\n";
    for (const auto& f : d.build_failures)
      out += "- " + md_commit(d, f.commit.sha) + " " + date_of(f.commit.time) + " " +
             markdown_escape(f.commit.subject) + ": " + markdown_escape(f.outcome) + "\n";
  }
  if (!d.not_measured.empty()) {
    out += "\n## Not measured\n\nSampled check-ins with no point in their series:\n\n";
    for (const auto& n : d.not_measured)
      out += "- " + markdown_escape(n.suite) + ": " + md_commit(d, n.commit.sha) + " " + date_of(n.commit.time) + " " +
             markdown_escape(n.commit.subject) + ": " + markdown_escape(n.why) + "\n";
  }
  return out;
}

std::string render_html(const ReportData& d, const HtmlAssets& assets) {
  std::string out =
      "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      // Nothing may load from elsewhere: the report opens offline and runs only its own scripts.
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src "
      "'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
      "<title>driftwatch report: " +
      h(d.project) + "</title>\n<style>\n" + std::string(assets.page_css) + "\n</style></head>\n<body>\n";
  out += "<header><h1>Drift report: " + h(d.project) + "</h1><p>Generated " +
         h(common::utc_for_people(d.generated_at)) +
         " by driftwatch. Uplift = .text reduction of the learned policy against the compiler's default heuristic "
         "(geometric mean over modules).</p></header>\n<main>\n";
  if (d.empty())
    out +=
        "<p id=\"empty-report\" class=\"empty\"><b>Nothing measured yet</b>: no check-in of this project has "
        "been swept. Run <code>driftwatch sweep</code>, then this report again.</p>\n";
  out += html_overview(d);
  out += "<section id=\"charts\"></section>\n";  // filled by the page script, one block per suite
  out +=
      "<noscript><p class=\"empty\">The charts need JavaScript. The tables here, report.md and report.json hold "
      "the figures (<code>driftwatch report --format md,json</code>).</p></noscript>\n";
  // Empty, its alerts and tables would only say "No alerts", "Every
  // recorded check-in built" under the banner that nothing was swept.
  if (!d.empty()) out += html_alerts(d) + html_tables(d);
  out += "</main>\n<script id=\"driftwatch-data\" type=\"application/json\">" +
         script_safe_json(dump(report_json(d), -1)) + "</script>\n<script>\n" + std::string(assets.charts_js) +
         "\n</script>\n<script>\n" + std::string(assets.page_js) + "\n</script>\n</body></html>\n";
  return out;
}

std::vector<std::string> summary_lines(const ReportData& d) {
  std::vector<std::string> culprits;
  std::set<std::string> seen;
  for (auto it = d.alerts.rbegin(); it != d.alerts.rend(); ++it) {  // oldest first
    // As the chart marks them: not one a person ignored, nor a wide one a
    // later sweep replaced by the check-ins it pinned.
    if (it->state == "ignored" || (it->state == "resolved" && it->note.starts_with("superseded"))) continue;
    if (!it->culprit.sha.empty() && seen.insert(it->culprit.sha).second)
      culprits.push_back(d.toolchain_labels.count(it->culprit.sha)
                             ? d.name_of(it->culprit.sha)
                             : short_sha(it->culprit.sha) + " " + clipped(common::printable(it->culprit.subject), 40));
  }
  std::string c = fmt::format("culprits found: {}", culprits.size());
  for (std::size_t i = 0; i < culprits.size() && i < 5; ++i) c += (i ? "; " : ": ") + culprits[i];
  if (culprits.size() > 5) c += fmt::format("; and {} more", culprits.size() - 5);
  std::string now = "uplift now: ", base = "baseline: ";
  for (const auto& o : d.overview) {
    if (now.size() > 12) now += "; ", base += "; ";
    if (!o.measured) {
      now += common::printable(o.suite) + ": " + o.unmeasured_text();
      base += common::printable(o.suite) + ": " + o.unmeasured_text();
      continue;
    }
    now += fmt::format("{} on {} at {} {}{} ({} since the baseline){}", common::signed_percent(o.latest_uplift),
                       common::printable(o.suite), d.name_of(o.latest.sha), date_of(o.latest.time), o.partial_text(),
                       o.change_text(), common::printable(not_measured_note(d, o)));
    if (!o.unusable_since.sha.empty())
      now +=
          ", but the policy cannot run since " + d.name_of(o.unusable_since.sha) + " " + date_of(o.unusable_since.time);
    base += fmt::format("{} at {} {}", common::signed_percent(o.baseline_uplift), d.name_of(o.baseline.sha),
                        date_of(o.baseline.time));
  }
  if (d.overview.empty()) now += "no suite", base += "no suite";
  if (!d.baseline_note.empty() && !d.empty()) base += " (" + common::printable(d.baseline_note) + ")";
  std::string decision =
      d.decisions.empty()
          ? "retraining: not decided yet (no decision recorded)"
          : "retraining: " + common::printable(d.decisions.front().verdict) + " (" +
                common::printable(common::utc_for_people(d.decisions.front().at)) + ")" +
                (d.decisions.front().rule.empty() ? std::string()
                                                  : ", fired: " + common::printable(d.decisions.front().rule)) +
                (d.decisions.front().stale.empty() ? std::string()
                                                   : "; out of date: " + common::printable(d.decisions.front().stale));
  std::string alerts = "open alerts: " + d.open_alerts_text();
  if (!d.analysis_pending.empty()) alerts += " (" + common::printable(d.analysis_pending) + ")";
  return {c, now, base, alerts, decision};
}

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : common::valid_utf8(text)) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string script_safe_json(std::string_view json_text) {
  std::string out;
  out.reserve(json_text.size());
  for (std::size_t i = 0; i < json_text.size(); ++i) {
    char c = json_text[i];
    if (c == '<')
      out += "\\u003c";
    else if (c == '>')
      out += "\\u003e";
    else if (c == '&')
      out += "\\u0026";
    else if (c == '\xe2' && i + 2 < json_text.size() && json_text[i + 1] == '\x80' &&
             (json_text[i + 2] == '\xa8' || json_text[i + 2] == '\xa9')) {
      out += json_text[i + 2] == '\xa8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else
      out += c;
  }
  return out;
}

std::string markdown_escape(std::string_view text) {
  // Escapes what starts markup anywhere in a line (emphasis, code, links,
  // tables, strikethrough, HTML), and what starts a block when the text
  // begins a line (headings, lists, numbered lists), no more: the Markdown
  // stays readable as plain text in an email.
  auto line = common::printable(text);
  std::string out;
  std::size_t digits = 0;
  while (digits < line.size() && line[digits] >= '0' && line[digits] <= '9') ++digits;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    bool block_start = (i == 0 && (c == '#' || c == '+' || c == '-' || c == '=')) ||
                       (i == digits && digits > 0 && (c == '.' || c == ')'));
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '\\':
      case '`':
      case '*':
      case '_':
      case '[':
      case ']':
      case '|':
      case '~':
        out += '\\';
        out += c;
        break;
      default:
        if (block_start) out += '\\';
        out += c;
    }
  }
  return out;
}

}  // namespace reports
