// driftwatch report: the project's drift report as HTML, Markdown and JSON,
// and optionally served on 127.0.0.1.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>

#include "cli/commands.h"
#include "cli/project.h"
#include "common/text.h"
#include "reports/render.h"
#include "sweep/report.h"

namespace cli {

namespace {

struct ReportArgs {
  ProjectArgs project;
  std::string out, formats = "html,md,json";
  bool serve = false;
  int port = 8765;
};

void run(Context& ctx, const ReportArgs& a) {
  std::vector<std::string> formats;
  for (const auto& f : common::split(a.formats, ','))  // "md,md" writes report.md once
    if (std::find(formats.begin(), formats.end(), f) == formats.end()) formats.push_back(f);
  sweep::report_files(formats).take();  // a bad format is named before anything is read
  // (An earlier report's index.html in --out is written again too.)
  if (a.serve && std::find(formats.begin(), formats.end(), "html") == formats.end() &&
      !std::filesystem::is_regular_file(std::filesystem::path(a.out) / "index.html"))
    throw common::Fatal("report --serve serves the HTML page: add html to --format");
  auto project = a.project.load(ctx);
  auto database = ctx.database();
  auto data = sweep::assemble_report(project, ctx.data_dir(), database);
  auto written = sweep::write_report(data, a.out, formats).take();
  for (const auto& p : written) fmt::print("wrote {}\n", p.string());
  for (const auto& line : reports::summary_lines(data)) fmt::print("  {}\n", line);
  if (a.serve) serve_dir(a.out, a.port);
}

}  // namespace

void serve_dir(const std::filesystem::path& dir, int port) {
  sweep::serve_report(dir, port, [](const std::string& url) {
    auto bound = url.substr(url.rfind(':') + 1);  // "8765/"
    bound.pop_back();
    fmt::print(
        "serving the report at {} on 127.0.0.1 only (Ctrl-C stops; from elsewhere: ssh -L {}:127.0.0.1:{} HOST)\n", url,
        bound, bound);
    std::fflush(stdout);
  }).take();
}

void attach_report(CLI::App& sub, Context& ctx) {
  auto a = std::make_shared<ReportArgs>();
  a->project.attach(sub);
  sub.add_option("--out", a->out, "directory to write the report into (new, empty, or an earlier report)")->required();
  sub.add_option("--format", a->formats,
                 "comma-separated: html, md, json (default: all three); a report already in --out keeps its own too");
  sub.add_flag("--serve", a->serve, "then serve it on http://127.0.0.1:PORT/ until stopped");
  sub.add_option("--port", a->port, "port for --serve (default 8765; 0: any free port)")->check(CLI::Range(0, 65535));
  sub.callback([&ctx, a] { run(ctx, *a); });
}

}  // namespace cli
