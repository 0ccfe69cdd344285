// The report page's charts in Debian's headless Chromium, on a report made
// from values (no sweep): hovering points a real history may not have.
#include <doctest/doctest.h>
#include <fmt/core.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "common/process.h"
#include "common/text.h"
#include "reports/render.h"
#include "reports/web_assets.h"
#include "tests/support/temp_dir.h"

namespace {

reports::ReportPoint point(const std::string& sha, std::int64_t time, double uplift, int measured) {
  reports::ReportPoint p;
  p.commit = {sha, "Alex <alex@example.org>", "change " + sha.substr(0, 4), time};
  p.build_outcome = "ok";
  p.evaluated = true;
  p.uplift = p.total_uplift = uplift;
  p.total_default = 1000;
  p.total_learned = static_cast<std::int64_t>(1000 * (1 - uplift));
  p.ties = measured;
  p.measured = measured;
  p.ratios = {1 - uplift, measured == 2 ? 1 - uplift : -1};
  return p;
}

/// The page's own account (report_check.mjs) of the report `d`.
nlohmann::json open_in_chromium(const reports::ReportData& d, const testing::TempDir& dir, const std::string& hover) {
  auto html = dir / "index.html";
  std::ofstream(html) << reports::render_html(d, reports::web_assets());
  common::ProcessSpec node;
  node.argv = {"node", std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/browser/report_check.mjs", html.string(),
               (dir / "shot.png").string(), hover};
  node.timeout = std::chrono::minutes(3);
  auto b = common::run_process(node).take();
  INFO("node: ", b.output, " (needs tests/browser/node_modules: bash scripts/web-deps)");
  REQUIRE(b.exit_code == 0);
  return nlohmann::json::parse(common::last_line(b.output));
}

}  // namespace

TEST_CASE("the report's points show their tooltips when hovered: the lowest uplift and learned total, a partial one") {
  // An uplift of exactly zero, the lowest of the series: a "nice" number the
  // chart's axis could end on, leaving the point on the grid's edge. The
  // partial point measured 1 of the suite's 2 modules.
  // Its learned total, 990 bytes, is the smallest: a round number the totals
  // axis could end on too.
  auto first = point("1111111111111111111111111111111111111111", 1767225600, 0.01, 2);
  auto zero = point("2222222222222222222222222222222222222222", 1767830400, 0.0, 2);
  auto partial = point("3333333333333333333333333333333333333333", 1768435200, 0.004, 1);
  // A rise in parts ends here: the end of a range, not a culprit.
  auto rose = point("4444444444444444444444444444444444444444", 1769040000, 0.006, 2);
  reports::ReportData d;
  d.project = "page";
  d.generated_at = "2026-12-03T12:00:00Z";
  d.suites = {{"holdout", "m1", {"a.c", "b.c"}, {first, zero, partial, rose}}};
  d.overview = {{"holdout", first.commit, partial.commit, 0.01, 0.004, true, {}, -0.006}};
  reports::ReportAlert alert;
  alert.id = 1;
  alert.kind = "uplift-dropped";
  alert.state = "open";
  alert.suite = "holdout";
  alert.sentence = "uplift on holdout dropped from +1.00% to +0.00%";
  alert.culprit = zero.commit;
  alert.last_good = first.commit.sha;
  alert.first_bad = zero.commit.sha;
  reports::ReportAlert spread = alert;
  spread.id = 2;
  spread.kind = "uplift-rose";
  spread.sentence = "uplift on holdout rose 0.60 points in parts";
  spread.culprit = {};
  spread.last_good = zero.commit.sha;
  spread.range_first = partial.commit.sha;
  spread.first_bad = rose.commit.sha;
  spread.spread = true;
  d.alerts = {alert, spread};

  testing::TempDir dir;
  auto page = open_in_chromium(d, dir, partial.commit.sha);
  CHECK(page["console_errors"].empty());
  // At a phone's width the page does not scroll sideways (its tables do).
  CHECK(page["phone"]["page_width"].get<int>() <= page["phone"]["window_width"].get<int>());
  CHECK(page["charts"]["holdout"]["uplift_points"] == 4);
  // The partial point's uplift is over other modules: off the line, apart.
  CHECK(page["charts"]["holdout"]["uplift_line_gaps"] == 1);
  // Hollow: the partial point, and the end of the spread range (no culprit).
  CHECK(page["charts"]["holdout"]["hollow_uplift"] == 2);
  CHECK(page["charts"]["holdout"]["culprit_marks"] == 1);
  CHECK(page["charts"]["holdout"]["range_end_marks"] == 1);
  CHECK(page["charts"]["holdout"]["marked_checkins"] == 2);
  CHECK(page["charts"]["holdout"]["mark_labels"] == nlohmann::json::array({"2222222", "..4444444"}));
  // The partial point is marked in the totals chart too (both totals), not
  // drawn as a drop: both lines break there.
  CHECK(page["charts"]["holdout"]["hollow_totals"] == 2);
  CHECK(page["charts"]["holdout"]["totals_line_gaps"] == 2);
  // Drawn at its lines' level: its smaller sums would stretch the axis.
  CHECK(page["charts"]["holdout"]["partial_totals_off_line"] == 0);
  REQUIRE(page["lowest"]["sha"] == zero.commit.sha);
  std::string lowest = page["lowest"]["tooltip"];
  CHECK_MESSAGE(lowest.find("222222222222") != std::string::npos, lowest);
  CHECK(lowest.find("uplift +0.00%") != std::string::npos);
  CHECK(lowest.find("culprit") != std::string::npos);
  REQUIRE(page["smallest_learned"]["sha"] == first.commit.sha);
  std::string smallest = page["smallest_learned"]["tooltip"];
  CHECK_MESSAGE(smallest.find("111111111111") != std::string::npos, smallest);
  CHECK(smallest.find("learned 990 B") != std::string::npos);
  std::string tip = page["tooltip"];
  CHECK_MESSAGE(tip.find("333333333333") != std::string::npos, tip);
  CHECK(tip.find("over 1 of 2 modules") != std::string::npos);
}

TEST_CASE("printed, the heatmap draws every module, not the 40 its scroll window shows on screen") {
  reports::ReportData d;
  d.project = "print";
  d.generated_at = "2026-12-07T12:00:00Z";
  auto a = point("1111111111111111111111111111111111111111", 1767225600, 0.01, 2);
  auto b = point("2222222222222222222222222222222222222222", 1767830400, 0.02, 2);
  std::vector<std::string> modules;
  for (int i = 0; i < 90; ++i) modules.push_back(fmt::format("src/m{:02}.c", i));
  for (auto* p : {&a, &b}) p->ratios.assign(modules.size(), 1 - p->uplift);
  d.suites = {{"holdout", "m1", modules, {a, b}}};
  d.overview = {{"holdout", a.commit, b.commit, 0.01, 0.02, true, {}, 0.01}};
  testing::TempDir dir;
  auto page = open_in_chromium(d, dir, "");
  INFO(page.dump());
  CHECK(page["console_errors"].empty());
  const auto& print = page["print"];
  CHECK(print["screen"]["holdout"]["rows"] == 90);
  CHECK(print["screen"]["holdout"]["in_view"] == 40);
  CHECK(print["printing"]["holdout"]["in_view"] == 90);
  CHECK(print["printing"]["holdout"]["height"].get<int>() >= 90 * 14);
  // After, the screen's height, and the window of rows the reader had scrolled to.
  CHECK(print["after"]["holdout"]["height"] == print["screen"]["holdout"]["height"]);
  CHECK(print["scrolled_zoom"]["holdout"][0] == 20);
  CHECK(print["after_zoom"]["holdout"] == print["scrolled_zoom"]["holdout"]);
  // Chromium's own print (to PDF) raises the event the page redraws on, and puts it back after.
  CHECK(print["pdf_beforeprint_events"] == 1);
  CHECK(print["after_pdf"]["holdout"] == print["screen"]["holdout"]["height"]);
}
