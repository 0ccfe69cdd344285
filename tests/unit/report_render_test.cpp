// The drift report's renderers on values: escaping of untrusted text in
// HTML, inlined JSON and Markdown; what the JSON and Markdown hold.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "reports/render.h"

namespace {

using nlohmann::json;

const std::string kHostile =
    "Fix <script>window.pwned=1</script> \"quoted\" 'single' & [link](http://x) *bold*\nnext line";

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

reports::ReportData sample() {
  reports::ReportData d;
  d.project = "toy <proj>";
  d.generated_at = "2026-11-30T12:00:00Z";
  d.commit_url = "https://git.example.org/dwcc/commit/{sha}";
  d.policy = {"sample-v1", "abcdef0123456789", "/p.policy", "1111111111111111", "holdout", "2026-01-01", {}};
  d.policy.lineage = {{"sample-v1", "abcdef0123456789", "1111111111111111", "2026-01-01", "active"}};
  d.baseline_note = "the first swept check-in";
  reports::SuiteSeries s{"testdata", "m1", {"hashtable", "json"}, {}};
  reports::ReportPoint a;
  a.commit = {"aaaaaaaaaaaaaaaaaaaa", "Alex <alex@example.org>", "Import dwcc", 1767225600};
  a.evaluated = true;
  a.uplift = 0.02;
  a.ratios = {0.95, 1.0};
  a.measured = 2;
  reports::ReportPoint b = a;
  b.commit = {"bbbbbbbbbbbbbbbbbbbb", "Mallory <m@example.org>", kHostile, 1767830400};
  b.uplift = 0.005;
  b.ratios = {1.02, -1};
  b.measured = 1;  // json timed out here: its totals leave it out
  reports::ReportPoint broken;
  broken.commit = {"cccccccccccccccccccc", "Priya", "Rename", 1768435200};
  broken.build_outcome = "build-failed";
  s.points = {a, b, broken};
  d.suites = {s};
  d.overview = {{"testdata", a.commit, b.commit, 0.02, 0.005, true, {}, -0.015}};
  reports::ReportAlert al;
  al.id = 7;
  al.kind = "uplift-dropped";
  al.state = "open";
  al.suite = "testdata";
  al.sentence = "uplift on testdata dropped from +2.00% to +0.50%: bbbbbbbbbbbb " + kHostile;
  al.culprit = b.commit;
  al.last_good = a.commit.sha;
  al.first_bad = b.commit.sha;
  al.uplift_before = 0.02;
  al.uplift_after = 0.005;
  al.most_affected = {"hashtable: ratio 0.9500 → 1.0200"};
  al.win_to_loss = {"hashtable"};
  al.events = {{"open", "driftwatch", "", "2026-11-30T12:05:00Z"}, {"acknowledged", "eve", "<b>looking</b>", "x"}};
  d.alerts = {al};
  d.build_failures = {{"testdata", broken.commit, "build-failed"}};
  return d;
}

const reports::HtmlAssets kAssets{"/*charts*/", "/*page*/", "/*style*/"};

}  // namespace

TEST_CASE("html_escape escapes markup and both quotes") {
  CHECK(reports::html_escape("<a href=\"x\" title='y'>&</a>") ==
        "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;");
  CHECK(reports::html_escape("plain") == "plain");
}

TEST_CASE("script_safe_json leaves no markup in inlined JSON and keeps it equal") {
  json j = {{"s", "</script><script>alert(1)</script><!-- & \u2028\u2029"}};
  auto safe = reports::script_safe_json(j.dump());
  CHECK(safe.find('<') == std::string::npos);
  CHECK(safe.find('>') == std::string::npos);
  CHECK(safe.find('&') == std::string::npos);
  CHECK(safe.find("\u2028") == std::string::npos);
  CHECK(json::parse(safe) == j);
}

TEST_CASE("markdown_escape keeps text on one line with no markup") {
  auto md = reports::markdown_escape(kHostile);
  CHECK(md.find('\n') == std::string::npos);
  CHECK(md.find("<script>") == std::string::npos);
  CHECK(md.find("&lt;script&gt;") != std::string::npos);
  CHECK(md.find("\\[link\\](http://x)") != std::string::npos);
  CHECK(reports::markdown_escape("# 1. - a_b") == "\\# 1. - a\\_b");
  CHECK(reports::markdown_escape("12. x") == "12\\. x");
  CHECK(md.find("\\*bold\\*") != std::string::npos);
}

TEST_CASE("render_json is versioned and carries the hostile subject unchanged") {
  auto j = json::parse(reports::render_json(sample()));
  CHECK(j["schema_version"] == 3);
  // The broken build's point has no figures, not figures of 0.
  CHECK(j["suites"][0]["points"][2]["evaluated"] == false);
  CHECK(j["suites"][0]["points"][2]["uplift"].is_null());
  CHECK(j["suites"][0]["points"][2]["total_default"].is_null());
  CHECK(j["suites"][0]["points"][2]["wins"].is_null());
  CHECK(j["suites"][0]["points"][1]["uplift"] == doctest::Approx(0.005));
  CHECK(j["project"] == "toy <proj>");
  CHECK(j["suites"][0]["evaluated"] == 2);
  CHECK(j["suites"][0]["points"][1]["subject"] == kHostile);
  CHECK(j["suites"][0]["points"][1]["ratios"][1].is_null());  // unmeasured module
  // The page marks a point whose figures are over fewer modules than the suite's.
  CHECK(j["suites"][0]["points"][0]["measured"] == 2);
  CHECK(j["suites"][0]["points"][1]["measured"] == 1);
  CHECK(j["suites"][0]["modules"].size() == 2);
  CHECK(j["suites"][0]["points"][0]["ratios"][0] == doctest::Approx(0.95));
  CHECK(j["alerts"][0]["culprit"]["sha"] == "bbbbbbbbbbbbbbbbbbbb");
  CHECK(j["alerts"][0]["events"].size() == 2);
  CHECK(j["decisions"].empty());
  CHECK(j["open_alerts"] == 1);
  CHECK(j["empty"] == false);
  CHECK(j["policy"]["lineage"][0]["note"] == "active");
  // Times for programs in ISO 8601; the page and the markdown say them for people.
  CHECK(j["generated_at"] == "2026-11-30T12:00:00Z");
  CHECK(j["alerts"][0]["events"][0]["at"] == "2026-11-30T12:05:00Z");
  for (const auto& text : {reports::render_markdown(sample()), reports::render_html(sample(), kAssets)}) {
    CHECK(text.find("Generated 2026-11-30 12:00:00 UTC") != std::string::npos);
    CHECK(text.find("2026-11-30 12:05:00 UTC") != std::string::npos);
  }
  CHECK(reports::render_markdown(sample()).find("2026-11-30T12") == std::string::npos);
}

TEST_CASE("render_html escapes every untrusted text and inlines the data once") {
  auto html = reports::render_html(sample(), kAssets);
  CHECK(count(html, "<script") == 3);  // data, charts, page: the subject's <script> is not among them
  CHECK(html.find("window.pwned=1</script>") == std::string::npos);
  CHECK(html.find("Fix &lt;script&gt;window.pwned=1&lt;/script&gt; &quot;quoted&quot; &#39;single&#39; &amp;") !=
        std::string::npos);
  CHECK(html.find("&lt;b&gt;looking&lt;/b&gt;") != std::string::npos);
  CHECK(html.find("<title>driftwatch report: toy &lt;proj&gt;</title>") != std::string::npos);
  CHECK(html.find("href=\"https://git.example.org/dwcc/commit/bbbbbbbbbbbbbbbbbbbb\"") != std::string::npos);
  CHECK(html.find("No retraining decision recorded yet.") != std::string::npos);
  // The modules behind the alert, under the words the Markdown and `alerts show` use.
  CHECK(html.find("modules moved most: ") != std::string::npos);
  // The inlined data parses back to the JSON rendering.
  auto begin = html.find("<script id=\"driftwatch-data\" type=\"application/json\">");
  REQUIRE(begin != std::string::npos);
  begin = html.find('>', begin) + 1;
  auto end = html.find("</script>", begin);
  auto inlined = json::parse(html.substr(begin, end - begin));
  CHECK(inlined["suites"][0]["points"][1]["subject"] == kHostile);
  CHECK(html.find("/*charts*/") < html.find("/*page*/"));
  CHECK(html.find("id=\"empty-report\"") == std::string::npos);
}

TEST_CASE("render_markdown gives the alerts and the decision with evidence and commit links") {
  auto md = reports::render_markdown(sample());
  CHECK(md.find("# Drift report: toy &lt;proj&gt;") == 0);
  CHECK(md.find("## Alerts — open: 1 of 1\n") != std::string::npos);
  CHECK(md.find("[`bbbbbbbbbbbb`](https://git.example.org/dwcc/commit/bbbbbbbbbbbbbbbbbbbb)") != std::string::npos);
  CHECK(md.find("turned from win to loss: hashtable") != std::string::npos);
  CHECK(md.find("uplift +2.00% → +0.50%") != std::string::npos);
  CHECK(md.find("No retraining decision recorded yet.") != std::string::npos);
  CHECK(md.find("<script>") == std::string::npos);
  CHECK(md.find("Mallory") != std::string::npos);
  CHECK(md.find("## Build failures") != std::string::npos);
  auto with_decision = sample();
  with_decision.decisions = {
      {"2026-11-30T12:10:00Z", "retrain", "uplift-below", {"uplift +0.50% < +1.00% for 2 check-ins"}}};
  auto md2 = reports::render_markdown(with_decision);
  CHECK(md2.find("**retrain** (2026-11-30 12:10:00 UTC)") != std::string::npos);
  CHECK(reports::render_html(with_decision, kAssets).find("retrain (2026-11-30 12:10:00 UTC)") != std::string::npos);
  CHECK(md2.find("- uplift +0.50% &lt; +1.00% for 2 check-ins") != std::string::npos);
}

TEST_CASE("a modules-failing alert names its failing modules in every format, not the modules that moved") {
  auto d = sample();
  auto& al = d.alerts.front();
  al.kind = "modules-failing";
  al.failing = {"zstd/huf_decompress.c", "zstd/zstd_opt.c"};
  al.win_to_loss.clear();
  auto md = reports::render_markdown(d);
  CHECK(md.find("- failing under the policy: zstd/huf\\_decompress.c; zstd/zstd\\_opt.c\n") != std::string::npos);
  CHECK(md.find("modules moved most") == std::string::npos);
  auto html = reports::render_html(d, kAssets);
  // Entries apart by "; ": one entry holds ", " itself ("default 759 → 668 B, learned …").
  CHECK(html.find("failing: zstd/huf_decompress.c; zstd/zstd_opt.c") != std::string::npos);
  CHECK(html.find("moved most: ") == std::string::npos);
  auto json = nlohmann::json::parse(reports::render_json(d));
  CHECK(json["alerts"][0]["failing"] == nlohmann::json::array({"zstd/huf_decompress.c", "zstd/zstd_opt.c"}));
  // Another kind keeps its most affected modules.
  al.kind = "uplift-dropped";
  al.failing.clear();
  CHECK(reports::render_markdown(d).find("- modules moved most: hashtable: ratio") != std::string::npos);
}

TEST_CASE("an empty report says that nothing was measured") {
  reports::ReportData d;
  d.project = "empty";
  d.suites = {{"testdata", "m", {}, {}}};
  d.overview = {{"testdata", {}, {}, 0, 0, false}};
  CHECK(d.empty());
  CHECK(reports::render_markdown(d).find("Nothing measured yet") != std::string::npos);
  auto html = reports::render_html(d, kAssets);
  CHECK(html.find("id=\"empty-report\"") != std::string::npos);
  // Nor does it go on to say that every check-in built, under that banner.
  CHECK(html.find("Every recorded check-in built") == std::string::npos);
  CHECK(html.find("No alerts") == std::string::npos);
  CHECK(json::parse(reports::render_json(d))["empty"] == true);
  d.baseline_note = "nothing measured yet";
  auto lines = reports::summary_lines(d);
  REQUIRE(lines.size() == 5);
  CHECK(lines[0] == "culprits found: 0");
  CHECK(lines[1] == "uplift now: testdata: not measured yet");
  CHECK(lines[2] == "baseline: testdata: not measured yet");
}

TEST_CASE("a suite swept but never measured says why: the policy cannot run, or nothing built") {
  reports::SuiteOverview o{"holdout", {}, {}, 0, 0, false};
  o.tried = 3;
  CHECK(o.unmeasured_text() == "no check-in built (3 tried)");
  o.unusable_since = {"cccccccccccccccccccc", "Ada", "Drop the ML channel", 0};
  CHECK(o.unmeasured_text() == "the policy cannot run here since cccccccccccc");
  auto d = sample();
  d.overview = {o};
  CHECK(reports::summary_lines(d)[1] == "uplift now: holdout: the policy cannot run here since cccccccccccc");
  CHECK(reports::render_markdown(d).find("| holdout | the policy cannot run here since cccccccccccc |") !=
        std::string::npos);
}

TEST_CASE("a sweep whose evaluations did not finish is no empty report: the suite and the check-ins say why") {
  reports::ReportData d;
  d.project = "night";
  d.suites = {{"testdata", "m", {}, {}}};
  reports::SuiteOverview o{"testdata", {}, {}, 0, 0, false};
  o.not_measured_after = 2;
  d.overview = {o};
  reports::CommitRef c{"dddddddddddddddddddd", "Ada", "Speed up <the> inliner", 1767225600};
  d.not_measured = {{"testdata", c, "its evaluation failed (job 9: worker <lost>); the next sweep tries it again"}};
  CHECK_FALSE(d.empty());
  CHECK(o.unmeasured_text() == "no evaluation finished (2 sampled check-in(s): see \"Not measured\")");
  CHECK(reports::summary_lines(d)[1] ==
        "uplift now: testdata: no evaluation finished (2 sampled check-in(s): see \"Not measured\")");
  auto md = reports::render_markdown(d);
  CHECK(md.find("Nothing measured yet") == std::string::npos);
  CHECK(
      md.find(
          "- testdata: `dddddddddddd` 2026-01-01 Speed up &lt;the&gt; inliner: its evaluation failed (job 9: worker") !=
      std::string::npos);
  auto html = reports::render_html(d, kAssets);
  CHECK(html.find("id=\"empty-report\"") == std::string::npos);
  CHECK(html.find("worker &lt;lost&gt;") != std::string::npos);  // escaped, as every quoted error is
  auto j = json::parse(reports::render_json(d));
  CHECK(j["empty"] == false);
  CHECK(j["not_measured"][0]["commit"]["sha"] == c.sha);

  // Measured before them: the latest uplift is followed by what is missing after it.
  auto later = sample();
  later.overview[0].not_measured_after = 1;
  later.overview[0].newest_not_measured = c;
  CHECK(reports::summary_lines(later)[1].find(
            "(-1.50 points since the baseline); 1 later sampled check-in(s) not measured, the newest dddddddddddd "
            "(see \"Not measured\")") != std::string::npos);
}

TEST_CASE("summary_lines names culprits, the uplift against the baseline, open alerts and the decision") {
  auto lines = reports::summary_lines(sample());
  REQUIRE(lines.size() == 5);
  CHECK(lines[0] == "culprits found: 1: bbbbbbbbbbbb Fix <script>window.pwned=1</script> \"quo…");
  CHECK(lines[0].find('\n') == std::string::npos);
  auto ignored = sample();
  ignored.alerts[0].state = "ignored";
  CHECK(reports::summary_lines(ignored)[0] == "culprits found: 0");
  CHECK(lines[1] == "uplift now: +0.50% on testdata at bbbbbbbbbbbb 2026-01-08 (-1.50 points since the baseline)");
  auto partial = sample();
  partial.overview[0].latest_measured = 1;
  partial.overview[0].modules = 2;
  CHECK(reports::summary_lines(partial)[1] ==
        "uplift now: +0.50% on testdata at bbbbbbbbbbbb 2026-01-08 over 1 of 2 modules (-1.50 points since the "
        "baseline)");
  // The overview tables say it too; a whole point does not.
  CHECK(reports::render_markdown(partial).find("| +0.50% over 1 of 2 modules |") != std::string::npos);
  CHECK(reports::render_html(partial, kAssets).find("<b>+0.50%</b> over 1 of 2 modules (") != std::string::npos);
  CHECK(reports::render_markdown(sample()).find(" of 2 modules") == std::string::npos);
  CHECK(reports::render_html(sample(), kAssets).find(" of 2 modules") == std::string::npos);
  // Measured over the modules both check-ins measured, the change is not
  // the difference of the two uplifts shown beside it: said so everywhere.
  partial.overview[0].change = -0.0191;
  CHECK(reports::summary_lines(partial)[1] ==
        "uplift now: +0.50% on testdata at bbbbbbbbbbbb 2026-01-08 over 1 of 2 modules (-1.91 points over the "
        "modules both measured since the baseline)");
  CHECK(reports::render_markdown(partial).find("| -1.91 points over the modules both measured |") != std::string::npos);
  CHECK(reports::render_html(partial, kAssets).find("(-1.91 points over the modules both measured)") !=
        std::string::npos);
  CHECK(reports::render_markdown(sample()).find("both measured") == std::string::npos);
  CHECK(lines[2] == "baseline: +2.00% at aaaaaaaaaaaa 2026-01-01 (the first swept check-in)");
  CHECK(lines[3] == "open alerts: 1 of 1");
  CHECK(lines[4] == "retraining: not decided yet (no decision recorded)");
  // One someone is on still counts as open, and is said so (alerts --exit-code leaves it out).
  auto d = sample();
  d.alerts.push_back(d.alerts.front());
  d.alerts.back().state = "acknowledged";
  d.alerts.push_back(d.alerts.front());
  d.alerts.back().state = "resolved";
  CHECK(reports::summary_lines(d)[3] == "open alerts: 2 of 3 (1 acknowledged)");
  CHECK(reports::render_markdown(d).find("## Alerts — open: 2 of 3 (1 acknowledged)\n") != std::string::npos);
  CHECK(json::parse(reports::render_json(d))["acknowledged_alerts"] == 1);
  CHECK(reports::render_html(d, kAssets).find(">2 of 3 (1 acknowledged)</dd>") != std::string::npos);
}

TEST_CASE("commit links and the baseline") {
  CHECK(reports::commit_link("https://x/{sha}/y/{sha}", "ab") == "https://x/ab/y/ab");
  CHECK(reports::commit_link("", "ab").empty());
  auto d = sample();
  auto& points = d.suites[0].points;  // a, b evaluated; c's build failed
  for (std::size_t i = 0; i < points.size(); ++i) points[i].position = int(2 * i + 2);  // 2, 4, 6
  CHECK(reports::baseline_index(d.suites[0], 4) == 1u);             // the training check-in, evaluated
  CHECK(reports::baseline_index(d.suites[0], 0) == 0u);             // trained before the range: its first
  CHECK(reports::baseline_index(d.suites[0], std::nullopt) == 0u);  // no training check-in in the history
  points[1].evaluated = false;
  // Its evaluation failed: the next one evaluated, never one before it
  // (the report once took a, `decide` b: two baselines for one series).
  points[2].evaluated = true;
  CHECK(reports::baseline_index(d.suites[0], 4) == 2u);
  CHECK(reports::baseline_index(d.suites[0], 3) == 2u);
  CHECK_FALSE(reports::baseline_index(d.suites[0], 7));  // nothing evaluated since: none, as `decide` says
  CHECK_FALSE(reports::baseline_index(reports::SuiteSeries{}, std::nullopt));
  CHECK(reports::baseline_position({1, 5, 9}, 5) == 5);
  CHECK(reports::baseline_position({1, 5, 9}, 6) == 9);
  CHECK(reports::baseline_position({1, 5, 9}, std::nullopt) == 1);
  CHECK_FALSE(reports::baseline_position({}, std::nullopt));
}

TEST_CASE("where the policy stopped running, the overview says so beside the last uplift, in points of change") {
  auto d = sample();
  reports::ReportPoint lost;
  lost.commit = {"dddddddddddddddddddd", "Jon", "[Driver] Keep the ML inliner's options", 1769040000};
  lost.position = 3;
  lost.build_outcome = "ok";
  lost.evaluation_error = "the compiler never consulted the policy";
  d.suites[0].points.push_back(lost);
  d.overview[0].unusable_since = lost.commit;
  auto md = reports::render_markdown(d);
  CHECK(md.find("+0.50% | -1.50 points; **the policy cannot run since [`dddddddddddd`]") != std::string::npos);
  auto html = reports::render_html(d, kAssets);
  CHECK(html.find("(-1.50 points)<br><b>the policy cannot run since ") != std::string::npos);
  CHECK(reports::summary_lines(d)[1].find(", but the policy cannot run since dddddddddddd") != std::string::npos);
  auto j = json::parse(reports::render_json(d));
  CHECK(j["overview"][0]["unusable_since"]["sha"] == "dddddddddddddddddddd");
  CHECK(j["suites"][0]["points"][3]["evaluation_error"] == "the compiler never consulted the policy");
  // Its alert, and a broken build's, have no uplift on the bad side to print.
  reports::ReportAlert al;
  al.id = 8;
  al.kind = "policy-unusable";
  al.state = "open";
  al.suite = "testdata";
  al.sentence = "the policy cannot run";
  al.culprit = lost.commit;
  al.first_bad = lost.commit.sha;
  al.last_good = "bbbbbbbbbbbbbbbbbbbb";
  al.uplift_before = 0.005;
  d.alerts = {al};
  md = reports::render_markdown(d);
  CHECK(md.find("uplift +0.50% → +0.00%") == std::string::npos);
  CHECK(md.find("- first bad [`dddddddddddd`]") != std::string::npos);
}

TEST_CASE("feature-set changes say what changed at each check-in, not only the sets there") {
  auto at = [](const char* sha) { return reports::CommitRef{sha, "A <a@example.org>", "subject", 1767225600}; };
  auto changes = reports::feature_set_changes("testdata", {{at("c0"), {}, {}},
                                                           {at("c1"), {"callee_users"}, {}},
                                                           {at("c2"), {"sroa_savings", "callee_users"}, {"new_thing"}},
                                                           {at("c3"), {"sroa_savings"}, {"new_thing"}},
                                                           {at("c4"), {"sroa_savings"}, {"new_thing"}},
                                                           {at("c5"), {"sroa_savings"}, {}}});
  REQUIRE(changes.size() == 4);
  CHECK(changes[0].at.sha == "c1");
  CHECK(changes[0].newly_missing == std::vector<std::string>{"callee_users"});
  CHECK(changes[1].at.sha == "c2");
  CHECK(changes[1].missing == std::vector<std::string>{"callee_users", "sroa_savings"});
  CHECK(changes[1].newly_missing == std::vector<std::string>{"sroa_savings"});
  CHECK(changes[1].newly_added == std::vector<std::string>{"new_thing"});
  // callee_users comes back: a change, though something is still missing.
  CHECK(changes[2].at.sha == "c3");
  CHECK(changes[2].newly_missing.empty());
  CHECK(changes[2].sent_again == std::vector<std::string>{"callee_users"});
  CHECK(changes[3].at.sha == "c5");
  CHECK(changes[3].no_longer_added == std::vector<std::string>{"new_thing"});
  CHECK(changes[3].added.empty());

  auto d = sample();
  d.feature_changes = changes;
  auto html = reports::render_html(d, kAssets);
  CHECK(html.find("sent again: ") != std::string::npos);
  CHECK(html.find("missing from here: ") != std::string::npos);
  CHECK(html.find("no longer sent: ") != std::string::npos);
  auto json = nlohmann::json::parse(reports::render_json(d));
  CHECK(json["feature_changes"][2]["sent_again"] == nlohmann::json::array({"callee_users"}));
}
