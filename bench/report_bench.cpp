// Renders the drift report of a synthetic history — 365 check-ins × 500
// modules, a few changes and alerts — and prints how long each format takes
// and how big it is. bench/report_bench.sh then opens the HTML in Chromium.
//
//   build/bench/report_bench OUT_DIR [CHECKINS] [MODULES]
#include <fmt/core.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "reports/render.h"
#include "reports/web_assets.h"

namespace {

/// A sha-like name for check-in i (distinct, not all zeros).
std::string sha_of(int i) { return fmt::format("{:08x}{:032x}", 2654435761u * unsigned(i + 1), i); }

reports::ReportData synthetic(int checkins, int modules) {
  reports::ReportData d;
  d.project = "synthetic";
  d.generated_at = "2026-11-30T12:00:00Z";
  d.policy = {"synthetic-v1", std::string(64, 'a'), "p.policy", std::string(40, '0'), "holdout", "2026-01-01", {}};
  d.baseline_note = "the first swept check-in";
  reports::SuiteSeries s{"holdout", "m", {}, {}};
  for (int j = 0; j < modules; ++j) s.modules.push_back(fmt::format("module_{:03}.c", j));
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> base(0.85, 1.08);
  std::vector<double> level(modules);
  for (auto& l : level) l = base(rng);
  for (int i = 0; i < checkins; ++i) {
    if (i % 60 == 59)  // a change every two months moves a tenth of the modules
      for (int j = i % 10; j < modules; j += 10) level[j] += (i % 120 == 59 ? 0.04 : -0.03);
    reports::ReportPoint p;
    p.commit = {sha_of(i), "Dev " + std::to_string(i % 7) + " <dev@example.org>",
                fmt::format("[Pass] change number {}", i), 1767225600 + 86400LL * i};
    p.position = i;
    p.build_outcome = "ok";
    p.evaluated = true;
    double log_sum = 0;
    for (double r : level) log_sum += std::log(r);
    p.uplift = 1 - std::exp(log_sum / modules);
    p.total_default = 1000000;
    p.total_learned = std::int64_t(1000000 * (1 - p.uplift));
    p.ratios = level;
    for (double r : level) (r < 1 ? p.wins : r > 1 ? p.losses : p.ties) += 1;
    s.points.push_back(std::move(p));
    if (i % 60 == 59) {
      reports::ReportAlert a;
      a.id = i;
      a.kind = i % 120 == 59 ? "uplift-dropped" : "uplift-rose";
      a.state = "open";
      a.suite = "holdout";
      a.sentence = "synthetic change";
      a.culprit = s.points.back().commit;
      d.alerts.push_back(std::move(a));
    }
  }
  d.overview = {{"holdout", s.points.front().commit, s.points.back().commit, s.points.front().uplift,
                 s.points.back().uplift, true}};
  d.suites = {std::move(s)};
  return d;
}

template <class F>
double seconds(F&& f) {
  auto t = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "usage: report_bench OUT_DIR [CHECKINS] [MODULES]\n");
    return 2;
  }
  std::filesystem::path out = argv[1];
  int checkins = argc > 2 ? std::atoi(argv[2]) : 365, modules = argc > 3 ? std::atoi(argv[3]) : 500;
  std::filesystem::create_directories(out);
  reports::ReportData d;
  double build = seconds([&] { d = synthetic(checkins, modules); });
  std::string html, md, json;
  double t_html = seconds([&] { html = reports::render_html(d, reports::web_assets()); });
  double t_md = seconds([&] { md = reports::render_markdown(d); });
  double t_json = seconds([&] { json = reports::render_json(d); });
  std::ofstream(out / "index.html") << html;
  std::ofstream(out / "report.md") << md;
  std::ofstream(out / "report.json") << json;
  fmt::print("synthetic history: {} check-ins × {} modules ({:.2f} s to make)\n", checkins, modules, build);
  fmt::print("render html: {:.3f} s, {:.1f} MB\n", t_html, html.size() / 1e6);
  fmt::print("render md:   {:.3f} s, {:.1f} kB\n", t_md, md.size() / 1e3);
  fmt::print("render json: {:.3f} s, {:.1f} MB\n", t_json, json.size() / 1e6);
}
