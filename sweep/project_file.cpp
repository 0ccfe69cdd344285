#include "sweep/project_file.h"

#include <toml++/toml.h>

#include <fmt/core.h>

#include <climits>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>

#include "common/read_file.h"
#include "common/text.h"
#include "tracker/sampling.h"

namespace sweep {
namespace fs = std::filesystem;

namespace {

using common::Error;

enum class Type {
  String,
  Path,
  Bool,
  Int,
  Jobs,
  Fraction,
  Strings,
  Number,
  Every,
  Date,
  Duration,
  PositiveDuration,
  DurationOrNever
};

/// The one table of project keys: where each lives, its type, and the field it fills.
struct Key {
  const char* section;
  const char* name;
  Type type;
  std::function<void(ProjectFile&, const toml::node&, const fs::path& base)> set;
};

template <class T>
T get(const toml::node& n) {
  return *n.value<T>();
}

/// A date as the sampling rules read it: a string, or TOML's own date or
/// date-time (`since = 2026-01-31`, as people write dates in TOML) in UTC.
/// None for a date-time with an offset other than UTC.
std::optional<std::string> date_text(const toml::node& n) {
  if (n.is_string()) return get<std::string>(n);
  auto day = [](const toml::date& d) { return fmt::format("{:04}-{:02}-{:02}", d.year, d.month, d.day); };
  if (const auto* d = n.as_date()) return day(d->get());
  if (const auto* dt = n.as_date_time()) {
    const auto& v = dt->get();
    if (v.offset && v.offset->minutes != 0) return std::nullopt;
    return fmt::format("{}T{:02}:{:02}:{:02}", day(v.date), v.time.hour, v.time.minute, v.time.second);
  }
  return std::nullopt;
}

std::string path_value(const toml::node& n, const fs::path& base) {
  auto s = get<std::string>(n);
  if (s.empty() || s.find("://") != std::string::npos) return s;
  fs::path p(s);
  if (s.rfind("~/", 0) == 0)
    if (const char* home = std::getenv("HOME")) p = fs::path(home) / s.substr(2);
  return (p.is_absolute() ? p : base / p).lexically_normal().string();
}

// A name without '/' means a shipped recipe or a suite in the data directory,
// not a path next to the project file.
std::string name_or_path(const toml::node& n, const fs::path& base) {
  auto s = get<std::string>(n);
  return s.find('/') == std::string::npos && s.find(".toml") == std::string::npos ? s : path_value(n, base);
}

const std::vector<Key>& keys() {
  static const std::vector<Key> table = {
      {"project", "name", Type::String, [](auto& p, auto& n, auto&) { p.name = get<std::string>(n); }},
      {"compiler", "repo", Type::Path, [](auto& p, auto& n, auto& b) { p.repo = path_value(n, b); }},
      {"compiler", "branch", Type::String, [](auto& p, auto& n, auto&) { p.branch = get<std::string>(n); }},
      {"compiler", "recipe", Type::String, [](auto& p, auto& n, auto& b) { p.recipe = name_or_path(n, b); }},
      {"policy", "file", Type::Path, [](auto& p, auto& n, auto& b) { p.policy = path_value(n, b); }},
      {"suites", "names", Type::Strings,
       [](auto& p, auto& n, auto& b) {
         p.suites.clear();
         for (const auto& e : *n.as_array()) p.suites.push_back(name_or_path(e, b));
       }},
      {"sampling", "every", Type::Every, [](auto& p, auto& n, auto&) { p.every = get<std::string>(n); }},
      {"sampling", "since", Type::Date, [](auto& p, auto& n, auto&) { p.since = *date_text(n); }},
      {"sampling", "until", Type::Date, [](auto& p, auto& n, auto&) { p.until = *date_text(n); }},
      {"sampling", "from", Type::String, [](auto& p, auto& n, auto&) { p.from = get<std::string>(n); }},
      {"sampling", "tags", Type::Bool, [](auto& p, auto& n, auto&) { p.tags = get<bool>(n); }},
      {"sampling", "stale_after", Type::DurationOrNever,
       [](auto& p, auto& n, auto&) {
         auto text = get<std::string>(n);
         p.stale_after_seconds = text.empty() ? 0 : common::parse_duration(text)->count();
       }},
      {"database", "dsn", Type::String, [](auto& p, auto& n, auto&) { p.dsn = get<std::string>(n); }},
      {"database", "data_dir", Type::Path, [](auto& p, auto& n, auto& b) { p.data_dir = path_value(n, b); }},
      {"run", "jobs", Type::Jobs, [](auto& p, auto& n, auto&) { p.jobs = int(get<std::int64_t>(n)); }},
      {"run", "retry_backoff", Type::Duration,
       [](auto& p, auto& n, auto&) { p.retry_backoff = double(common::parse_duration(get<std::string>(n))->count()); }},
      {"alerts", "min_uplift_change", Type::Fraction,
       [](auto& p, auto& n, auto&) { p.alerts.min_uplift_change = get<double>(n); }},
      {"alerts", "min_total_change", Type::Fraction,
       [](auto& p, auto& n, auto&) { p.alerts.min_total_change = get<double>(n); }},
      {"alerts", "flipped_modules", Type::Int,
       [](auto& p, auto& n, auto&) { p.alerts.flipped_modules = int(get<std::int64_t>(n)); }},
      {"alerts", "failing_modules", Type::Int,
       [](auto& p, auto& n, auto&) { p.alerts.failing_modules = int(get<std::int64_t>(n)); }},
      {"alerts", "broken_builds", Type::Int,
       [](auto& p, auto& n, auto&) { p.alerts.broken_builds = int(get<std::int64_t>(n)); }},
      {"alerts", "bisect", Type::Bool, [](auto& p, auto& n, auto&) { p.alerts.bisect = get<bool>(n); }},
      {"notify", "command", Type::String, [](auto& p, auto& n, auto&) { p.notify.command = get<std::string>(n); }},
      {"notify", "webhook", Type::String, [](auto& p, auto& n, auto&) { p.notify.webhook = get<std::string>(n); }},
      {"notify", "webhook_format", Type::String,
       [](auto& p, auto& n, auto&) { p.notify.webhook_format = get<std::string>(n); }},
      {"notify", "resolved", Type::Bool, [](auto& p, auto& n, auto&) { p.notify.resolved = get<bool>(n); }},
      {"notify", "command_timeout", Type::PositiveDuration,
       [](auto& p, auto& n, auto&) { p.notify.command_timeout = *common::parse_duration(get<std::string>(n)); }},
      {"notify", "webhook_timeout", Type::PositiveDuration,
       [](auto& p, auto& n, auto&) { p.notify.webhook_timeout = *common::parse_duration(get<std::string>(n)); }},
      {"report", "commit_url", Type::String, [](auto& p, auto& n, auto&) { p.commit_url = get<std::string>(n); }},
      // [decide]: the retraining rules, each on or off with its thresholds (reports/retraining.h).
      {"decide", "uplift_fraction", Type::Bool, [](auto& p, auto& n, auto&) { p.decide.fraction_on = get<bool>(n); }},
      {"decide", "min_fraction", Type::Number, [](auto& p, auto& n, auto&) { p.decide.min_fraction = get<double>(n); }},
      {"decide", "in_a_row", Type::Int, [](auto& p, auto& n, auto&) { p.decide.in_a_row = int(get<std::int64_t>(n)); }},
      {"decide", "uplift_floor", Type::Bool, [](auto& p, auto& n, auto&) { p.decide.floor_on = get<bool>(n); }},
      {"decide", "min_uplift", Type::Number, [](auto& p, auto& n, auto&) { p.decide.min_uplift = get<double>(n); }},
      {"decide", "no_worse", Type::Bool, [](auto& p, auto& n, auto&) { p.decide.no_worse_on = get<bool>(n); }},
      {"decide", "min_no_worse", Type::Number, [](auto& p, auto& n, auto&) { p.decide.min_no_worse = get<double>(n); }},
      {"decide", "features", Type::Bool, [](auto& p, auto& n, auto&) { p.decide.features_on = get<bool>(n); }},
      {"decide", "age", Type::Bool, [](auto& p, auto& n, auto&) { p.decide.age_on = get<bool>(n); }},
      {"decide", "max_age_checkins", Type::Int,
       [](auto& p, auto& n, auto&) { p.decide.max_age_checkins = int(get<std::int64_t>(n)); }},
      {"decide", "max_age_days", Type::Int,
       [](auto& p, auto& n, auto&) { p.decide.max_age_days = int(get<std::int64_t>(n)); }},
      // [retrain]: training a candidate and judging it on held-out suites.
      {"retrain", "promote", Type::String, [](auto& p, auto& n, auto&) { p.retrain.promote = get<std::string>(n); }},
      {"retrain", "margin", Type::Fraction, [](auto& p, auto& n, auto&) { p.retrain.margin = get<double>(n); }},
      {"retrain", "max_extra_losing", Type::Int,
       [](auto& p, auto& n, auto&) { p.retrain.max_extra_losing = int(get<std::int64_t>(n)); }},
      {"retrain", "training_suite", Type::String,
       [](auto& p, auto& n, auto& b) { p.retrain.training_suite = name_or_path(n, b); }},
      {"retrain", "holdout", Type::Strings,
       [](auto& p, auto& n, auto& b) {
         p.retrain.holdout.clear();
         for (const auto& e : *n.as_array()) p.retrain.holdout.push_back(name_or_path(e, b));
       }},
      {"retrain", "validation_suite", Type::String,
       [](auto& p, auto& n, auto& b) { p.retrain.validation_suite = name_or_path(n, b); }},
      {"retrain", "settings", Type::String, [](auto& p, auto& n, auto&) { p.retrain.settings = get<std::string>(n); }},
  };
  return table;
}

const char* type_name(Type t) {
  switch (t) {
    case Type::String:
    case Type::Path: return "a string";
    case Type::Bool: return "true or false";
    case Type::Int: return "a whole number from 0 to 2147483647";
    case Type::Jobs: return "a whole number from 0 (one per core) to 1024";
    case Type::Fraction: return "a number between 0 and 1";
    case Type::Strings: return "a list of strings";
    case Type::Number: return "a number";
    case Type::Every:
      return "a string \"N\", \"Nd\", \"Nw\" or \"Nm\" (every N check-ins, or the last of each N days, weeks or "
             "months)";
    case Type::Date: return "a UTC date, 2026-01-31 or 2026-01-31T12:00:00";
    case Type::Duration:
      return "a duration such as \"30s\", \"5m\" or \"1h\"";
    case Type::PositiveDuration:
      return "a duration above zero such as \"30s\" or \"2m\"";
    case Type::DurationOrNever:
      return "a duration above zero such as \"3d\" or \"36h\", or \"\" for never";
  }
  return "";
}

bool type_fits(Type t, const toml::node& n) {
  switch (t) {
    case Type::String:
    case Type::Path: return n.is_string();
    case Type::Bool: return n.is_boolean();
    case Type::Int: return n.is_integer() && get<std::int64_t>(n) >= 0 && get<std::int64_t>(n) <= INT_MAX;
    // As -j: more threads than that only fail to start.
    case Type::Jobs: return n.is_integer() && get<std::int64_t>(n) >= 0 && get<std::int64_t>(n) <= 1024;
    // Checked here, not when the sweep gets to them after starting the database.
    case Type::Every: return n.is_string() && (get<std::string>(n).empty() || tracker::parse_every(get<std::string>(n)));
    case Type::Date: {
      auto text = date_text(n);
      return text && (text->empty() || tracker::parse_date(*text));
    }
    case Type::Number: return n.is_floating_point() || n.is_integer();
    case Type::Duration:
      return n.is_string() && common::parse_duration(get<std::string>(n)).has_value();
    case Type::PositiveDuration:
      if (auto d = n.is_string() ? common::parse_duration(get<std::string>(n)) : std::nullopt) return d->count() > 0;
      return false;
    case Type::DurationOrNever:
      if (!n.is_string()) return false;
      if (get<std::string>(n).empty()) return true;
      if (auto d = common::parse_duration(get<std::string>(n))) return d->count() > 0;
      return false;
    case Type::Fraction: return (n.is_floating_point() || n.is_integer()) && get<double>(n) >= 0 && get<double>(n) <= 1;
    case Type::Strings: {
      const auto* a = n.as_array();
      if (!a) return false;
      for (const auto& e : *a)
        if (!e.is_string()) return false;
      return true;
    }
  }
  return false;
}

/// A TOML basic string holding `s` exactly: quotes, backslashes and control characters escaped.
std::string toml_quoted(const std::string& s) {
  std::string out = "\"";
  for (unsigned char ch : s) {
    if (ch == '"' || ch == '\\')
      out += '\\', out += char(ch);
    else if (ch < 0x20 || ch == 0x7f)
      out += fmt::format("\\u{:04X}", ch);
    else
      out += char(ch);
  }
  return out + "\"";
}

/// A value as the file wrote it, for an error: which of several keys (or
/// which typo) is wrong shows without opening the file.
std::string written(const toml::node& n) {
  if (n.is_string()) return toml_quoted(get<std::string>(n));
  if (n.is_integer()) return std::to_string(get<std::int64_t>(n));
  if (n.is_floating_point()) return fmt::format("{}", get<double>(n));
  if (n.is_boolean()) return get<bool>(n) ? "true" : "false";
  if (n.is_array()) return "a list";
  if (n.is_table()) return "a table";
  std::ostringstream out;  // a date, a time, or both: as TOML writes them
  if (n.is_date_time())
    out << n.as_date_time()->get();
  else if (n.is_date())
    out << n.as_date()->get();
  else if (n.is_time())
    out << n.as_time()->get();
  return out.str();
}

std::string where(const std::string& origin, const toml::node& n) {
  return fmt::format("{}:{}", origin, n.source().begin.line);
}

common::Result<Toolchain> parse_toolchain(const toml::node& n, const std::string& origin, const fs::path& base) {
  const auto* t = n.as_table();
  if (!t) return Error{where(origin, n) + ": each [[toolchains]] entry must be a table"};
  Toolchain out;
  for (const auto& [k, v] : *t) {
    std::string key(k.str());
    if (!v.is_string()) return Error{where(origin, v) + ": toolchains." + key + " must be a string, not " + written(v)};
    if (key == "dir") {
      out.dir = path_value(v, base);
      // "nightly/" is "nightly": one identity, and its name as the label.
      if (!out.dir.has_filename() && out.dir.has_relative_path()) out.dir = out.dir.parent_path();
    } else if (key == "label")
      out.label = get<std::string>(v);
    else if (key == "date" && !get<std::string>(v).empty() && !tracker::parse_date(get<std::string>(v)))
      return Error{where(origin, v) + ": toolchains.date must be " + type_name(Type::Date) + ", not " + written(v)};
    else if (key == "date") out.date = get<std::string>(v);
    else return Error{where(origin, v) + ": unknown key 'toolchains." + key + "' (expected dir, label, date)"};
  }
  if (out.dir.empty()) return Error{where(origin, n) + ": a [[toolchains]] entry needs dir"};
  if (out.label.empty()) out.label = out.dir.filename().string();
  return out;
}

common::Status check_values(const ProjectFile& p, const std::string& origin) {
  if (!common::is_directory_name(p.name))
    return Error{origin + ": project.name " + common::quoted(p.name) +
                 " must not be empty, '.' or '..', nor hold a '/' (it names directories)"};
  if (p.repo.empty() && p.toolchains.empty())
    return Error{origin + ": set compiler.repo (a git repository) or list [[toolchains]]"};
  if (p.policy.empty()) return Error{origin + ": missing key 'policy.file' (the frozen policy to track)"};
  if (p.suites.empty()) return Error{origin + ": suites.names is missing or empty (name at least one suite)"};
  if (p.notify.webhook_format != "json" && p.notify.webhook_format != "slack")
    return Error{origin + ": notify.webhook_format must be \"json\" or \"slack\""};
  if (!p.notify.webhook.empty() && p.notify.webhook.rfind("http://", 0) != 0 &&
      p.notify.webhook.rfind("https://", 0) != 0)
    return Error{origin + ": notify.webhook must be an http:// or https:// URL"};
  // A worker waits 10 min at most between attempts, and its --retry-backoff
  // (a Slurm task's) takes no more either.
  if (p.retry_backoff > kMaxRetryBackoffSeconds) return Error{origin + ": run.retry_backoff must be at most 10m"};
  // 0 would not turn modules-flipped alerts off: it would open a
  // modules-failing alert on a single failing module.
  if (p.alerts.flipped_modules < 1) return Error{origin + ": alerts.flipped_modules must be at least 1"};
  if (p.alerts.failing_modules < 1) return Error{origin + ": alerts.failing_modules must be at least 1"};
  if (p.alerts.broken_builds < 1)
    return Error{origin + ": alerts.broken_builds must be at least 1 (0 would never raise a build-broken alert)"};
  if (auto bad = reports::validate(p.decide)) return Error{origin + ": [decide] " + *bad};
  if (p.retrain.promote != "auto" && p.retrain.promote != "never")
    return Error{origin + ": retrain.promote must be \"auto\" or \"never\""};
  if (p.retrain.settings != "shipped" && p.retrain.settings != "small")
    return Error{origin + ": retrain.settings must be \"shipped\" or \"small\""};
  for (std::size_t i = 0; i < p.suites.size(); ++i) {
    if (p.suites[i].empty()) return Error{origin + ": suites.names holds an empty name"};
    for (std::size_t j = 0; j < i; ++j)
      if (p.suites[j] == p.suites[i]) return Error{origin + ": suites.names lists '" + p.suites[i] + "' twice"};
  }
  if (!p.commit_url.empty()) {
    // Every link would otherwise lead to one page, or keep a placeholder nobody fills.
    if (p.commit_url.rfind("http://", 0) != 0 && p.commit_url.rfind("https://", 0) != 0)
      return Error{origin + ": report.commit_url must be an http:// or https:// URL"};
    auto sha = p.commit_url.find("{sha}");
    if (sha == std::string::npos)
      return Error{origin + ": report.commit_url must hold {sha}, where each link puts its commit"};
    std::string rest = p.commit_url;
    for (auto at = rest.find("{sha}"); at != std::string::npos; at = rest.find("{sha}")) rest.erase(at, 5);
    if (rest.find('{') != std::string::npos || rest.find('}') != std::string::npos)
      return Error{origin + ": report.commit_url may hold only the placeholder {sha}"};
  }
  for (const auto& s : p.retrain.holdout)
    if (s.empty()) return Error{origin + ": retrain.holdout holds an empty name"};
  if (p.retrain.training_suite.empty()) return Error{origin + ": retrain.training_suite must name a suite"};
  for (const auto& s : p.holdout_suites()) {
    if (s == p.retrain.training_suite)
      return Error{origin + ": retrain.training_suite '" + s +
                   "' is also a held-out suite: a candidate must be judged on code it did not train on"};
    if (!p.retrain.validation_suite.empty() && s == p.retrain.validation_suite)
      return Error{origin + ": retrain.validation_suite '" + s +
                   "' is also a held-out suite: training must never choose on the code it is judged on"};
  }
  if (p.retrain.validation_suite == p.retrain.training_suite)
    return Error{origin + ": retrain.validation_suite '" + p.retrain.validation_suite +
                 "' is the training suite: choices made on it would be made on the code trained on"};
  return common::Ok{};
}

}  // namespace

common::Result<ProjectFile> parse_project_file(const std::string& text, const std::string& origin,
                                               const fs::path& base_dir) {
  toml::table root;
  try {
    root = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    return Error{fmt::format("{}:{}: {}", origin, e.source().begin.line, e.description())};
  }
  ProjectFile p;
  // The directory's name ("proj/" has an empty filename: the parent's is "proj").
  p.name = (base_dir.has_filename() ? base_dir : base_dir.parent_path()).filename().string();
  for (const auto& [section_key, section] : root) {
    std::string sname(section_key.str());
    if (sname == "toolchains") {
      const auto* list = section.as_array();
      if (!list) return Error{where(origin, section) + ": toolchains must be written as [[toolchains]] tables"};
      for (const auto& entry : *list) {
        auto t = parse_toolchain(entry, origin, base_dir);
        if (!t) return t.error();
        p.toolchains.push_back(std::move(*t));
      }
      continue;
    }
    const auto* table = section.as_table();
    bool known_section = false;
    for (const auto& k : keys()) known_section = known_section || sname == k.section;
    // A misspelling is answered with what is known there, as a recipe's is.
    if (!table || !known_section) {
      std::string sections;
      for (const auto& k : keys())
        if (sections.find("[" + std::string(k.section) + "]") == std::string::npos)
          sections += (sections.empty() ? "[" : ", [") + std::string(k.section) + "]";
      return Error{where(origin, section) + ": unknown " + (table ? "section [" + sname + "]" : "key '" + sname + "'") +
                   " (the file takes " + sections + " and [[toolchains]])"};
    }
    for (const auto& [key, value] : *table) {
      std::string kname(key.str());
      const Key* found = nullptr;
      for (const auto& k : keys())
        if (sname == k.section && kname == k.name) found = &k;
      if (!found) {
        std::string names;
        for (const auto& k : keys())
          if (k.section == sname) names += (names.empty() ? "" : ", ") + std::string(k.name);
        return Error{where(origin, value) + ": unknown key '" + sname + "." + kname + "' ([" + sname + "] takes " +
                     names + ")"};
      }
      if (!type_fits(found->type, value))
        return Error{where(origin, value) + ": " + sname + "." + kname + " must be " + type_name(found->type) +
                     ", not " + written(value)};
      found->set(p, value, base_dir);
    }
  }
  // An empty name is refused (check_values), never one shared default: two
  // projects of one name share a database's sweeps, alerts and lineage.
  if (auto s = check_values(p, origin); !s) return s.error();
  return p;
}

common::Result<ProjectFile> load_project_file(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    return Error{path.string() + " is a directory, not a project file" +
                 (fs::exists(path / "driftwatch.toml", ec) ? " (give " + (path / "driftwatch.toml").string() + ")"
                                                           : "")};
  auto text = common::read_file(path);
  if (!text && fs::exists(path, ec)) return Error{"the project file: " + text.error().message};
  if (!text) return Error{"cannot read the project file " + path.string() + " (no such file; `driftwatch init` writes one)"};
  auto abs = fs::absolute(path);
  auto p = parse_project_file(*text, path.string(), abs.parent_path());
  if (p) p->path = abs;
  return p;
}

std::string project_file_template(const std::string& name, const std::string& repo, const std::string& policy,
                                  const std::string& recipe, const std::string& since, const std::string& branch) {
  return fmt::format(R"(# driftwatch project: what to track, and how.
# The project's commands read this file (--config FILE, else ./driftwatch.toml).
# Relative paths are relative to this file.

[project]
name = {name}             # names the project's sweeps and its lock

[compiler]
repo = {repo}             # the compiler's git repository (read only)
branch = {branch}                 # "" = HEAD; the first-parent line of this branch is swept
recipe = {recipe}  # a shipped recipe (sample-compiler, llvm-project) or a recipe file

[policy]
file = {policy}           # the frozen learned policy; its training check-in is the baseline

[suites]
names = ["holdout"]         # suites by name (in the data directory) or directory

[sampling]
every = "1w"                # N (every Nth check-in), Nd, Nw, Nm (the last check-in of each period);
                            # "" = every check-in (with tags = true: only the tagged ones)
since = {since}                  # YYYY-MM-DD, UTC; "" = the whole history
until = ""
from = ""                   # first check-in of the range (inclusive)
tags = false                # tagged check-ins as well as every's
stale_after = ""            # a tracked branch whose tip is older fails the sweep, as a nightly
                            #   fetch that stopped would otherwise find "nothing new" for ever:
                            #   "3d", "36h"; "" = never

[database]
dsn = ""                    # "" = the embedded PostgreSQL in the data directory
data_dir = ""               # "" = $DRIFTWATCH_DATA_DIR, else the default

[run]
jobs = 0                    # parallel compiles, up to 1024; 0 = one per core
retry_backoff = "10s"       # a failed job is tried again after this, doubled for each further attempt
                            #   (at most 10 min; a build or an evaluation gets 3 attempts)

[alerts]
min_uplift_change = 0.002   # a step of the suite uplift of 0.2 points or more is a change
min_total_change = 0.002    # a step of the default's or the learned total .text (fraction)
flipped_modules = 3         # a size change under the uplift threshold with this many modules turned
                            #   from win to loss is modules-flipped
failing_modules = 1         # this many modules newly failing under the policy (a crash or a hang of the
                            #   compiler, not the machine's; or a compile that no longer asks it; at most
                            #   all of a small suite's modules but one) is modules-failing
broken_builds = 3           # consecutive broken samples before an alert
bisect = true               # pin every change to one check-in

[notify]
command = ""                # run with each new alert (and end) as JSON on standard input
webhook = ""                # http(s) URL receiving each new alert (and end) as a JSON POST
webhook_format = "json"     # json, or slack (also Mattermost)
resolved = true             # also send the end of a failure alert (a build fixed, a crash gone)
command_timeout = "30s"     # the hook's time per alert; past it, the hook is not tried on the run's other alerts
webhook_timeout = "10s"     # the webhook's, the same way

[report]
commit_url = ""             # e.g. "https://github.com/llvm/llvm-project/commit/{{sha}}"

[decide]                    # when `driftwatch decide` says retrain: any rule that is on and fires
uplift_fraction = true      # rule: the uplift fell below min_fraction of the baseline's …
min_fraction = 0.5          #   (the baseline: the policy's training check-in)
in_a_row = 2                #   … for this many sampled check-ins in a row (and by min_uplift_change)
uplift_floor = true         # rule: the uplift at the head fell below min_uplift (and the baseline's)
min_uplift = 0.0            #   0 = the learned heuristic now loses to the default
no_worse = true             # rule: the share of modules no worse than the default fell below min_no_worse (and the baseline's)
min_no_worse = 0.9
features = true             # rule: the compiler stopped sending features the policy uses, or reshaped them
age = false                 # rule: the policy is older than max_age_checkins check-ins or max_age_days days
max_age_checkins = 0        #   0 = not checked
max_age_days = 0

[retrain]                   # `driftwatch retrain` (and `decide --act`)
promote = "auto"            # auto: promote a candidate that wins; never: record it only
margin = 0.001              # uplift (fraction) the candidate must gain on the held-out suites
max_extra_losing = 0        # modules it may make worse beyond the active policy's count
training_suite = "train"    # trained on; never one of the held-out suites
validation_suite = ""       # training's choices (best checkpoint, margin) made on it, e.g. "validation"; "" = none
holdout = []                # judged on; [] = the suites above
settings = "shipped"        # shipped (a gate is refitted as a gate; a network as the residual one) or small

# Prebuilt toolchains (nightly install prefixes) instead of, or besides, a repository
# (instead of one: set compiler.repo = "" above; drift is read in date order and each
# change pinned to a nightly; undated ones are measured but left out; bisection and
# retrain need the repository):
# [[toolchains]]
# dir = "/opt/llvm-nightly/2026-01-05"
# label = "2026-01-05"
# date = "2026-01-05"
)",
                     fmt::arg("name", toml_quoted(name)), fmt::arg("repo", toml_quoted(repo)),
                     fmt::arg("policy", toml_quoted(policy)), fmt::arg("recipe", toml_quoted(recipe)),
                     fmt::arg("since", toml_quoted(since)), fmt::arg("branch", toml_quoted(branch)));
}

}  // namespace sweep
