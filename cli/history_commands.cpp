// driftwatch sample-history | commits
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/options.h"
#include "common/json_text.h"
#include "common/text.h"
#include "tracker/sample_history.h"
#include "tracker/selection.h"

namespace cli {
namespace {

struct SampleHistoryArgs {
  std::string dir;
  int weeks = 52;
  std::string start;
  std::string history;
};

void run_sample_history(const SampleHistoryArgs& a) {
  tracker::SampleHistoryOptions o;
  o.weeks = a.weeks;
  o.start = a.start.empty() ? tracker::default_sample_start() : tracker::parse_date(a.start).take();
  if (!a.history.empty()) o.history_file = a.history;
  auto report = tracker::write_sample_history(a.dir, o).take();
  fmt::print("wrote {}: {} check-ins ({} on the main branch) from {}, head {}\n", a.dir, report.commits,
             report.main_commits, tracker::format_date(o.start), report.head.substr(0, 12));
}

void run_commits(const RangeArgs& a, bool json) {
  auto repo = tracker::GitRepo::open(a.repo).take();
  auto commits = tracker::select_commits(repo, a.options()).take();
  if (json) {
    auto out = nlohmann::json::array();
    for (const auto& c : commits)
      out.push_back({{"sha", c.sha},
                     {"date", tracker::format_date(c.time)},
                     {"time", c.time},
                     {"author", c.author},
                     {"subject", c.subject},
                     {"parents", c.parents},
                     {"tags", c.tags}});
    // Commit text is any bytes: invalid UTF-8 becomes U+FFFD rather than an exception.
    fmt::print("{}\n", common::json_text(out, 2));
    return;
  }
  for (const auto& c : commits) {
    std::string tags;
    for (const auto& t : c.tags) tags += (tags.empty() ? " (" : ", ") + t;
    if (!tags.empty()) tags += ")";
    fmt::print("{}  {}  {}{}{}\n", c.short_sha(), tracker::format_date(c.time), c.is_merge() ? "[merge] " : "",
               common::printable(c.subject), tags);
  }
}

}  // namespace

void attach_sample_history(CLI::App& sub, Context&) {
  auto a = std::make_shared<SampleHistoryArgs>();
  sub.add_option("dir", a->dir, "where to create the repository (must not exist or be empty)")->required();
  sub.add_option("--weeks", a->weeks, "check-ins of the first N weeks")->check(CLI::Range(1, 520));
  sub.add_option("--start", a->start, "date of week 0, YYYY-MM-DD (default 2025-12-01)");
  sub.add_option("--history", a->history, "a history script of your own (default: the shipped samples/history.toml)");
  sub.callback([a] { run_sample_history(*a); });
}

void attach_commits(CLI::App& sub, Context&) {
  auto a = std::make_shared<RangeArgs>();
  auto json = std::make_shared<bool>(false);
  a->attach(sub);
  sub.add_flag("--json", *json, "machine-readable output");
  sub.callback([a, json] { run_commits(*a, *json); });
}

}  // namespace cli
