#include "evaluator/debian_source.h"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>

#include "common/read_file.h"
#include "common/process.h"
#include "common/text.h"
#include "evaluator/files.h"

namespace evaluator {

using common::Error;
namespace fs = std::filesystem;

namespace {

struct Entry {
  std::string uris, suites, components, signed_by;
};

// deb822: stanzas of "Key: value" fields, continuation lines start with a space.
std::vector<std::map<std::string, std::string>> deb822_stanzas(const std::string& text) {
  std::vector<std::map<std::string, std::string>> out(1);
  std::string key;
  for (const auto& line : common::split(text, '\n')) {
    if (!line.empty() && line[0] == '#') continue;
    if (common::trim(line).empty()) {
      if (!out.back().empty()) out.emplace_back();
      key.clear();
      continue;
    }
    if ((line[0] == ' ' || line[0] == '\t') && !key.empty()) {
      out.back()[key] += "\n" + line;
      continue;
    }
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    key = common::trim(line.substr(0, colon));
    std::transform(key.begin(), key.end(), key.begin(), ::tolower);
    out.back()[key] = common::trim(line.substr(colon + 1));
  }
  if (out.back().empty()) out.pop_back();
  return out;
}

// "deb [signed-by=/k.gpg arch=amd64] http://mirror/debian bookworm main contrib"
std::optional<Entry> one_line_entry(const std::string& raw) {
  auto line = common::trim(raw.substr(0, raw.find('#')));
  if (!line.starts_with("deb ")) return std::nullopt;
  line = common::trim(line.substr(4));
  Entry e;
  if (line.starts_with("[")) {
    auto close = line.find(']');
    if (close == std::string::npos) return std::nullopt;
    for (const auto& opt : common::split(line.substr(1, close - 1), ' '))
      if (opt.starts_with("signed-by=")) e.signed_by = opt.substr(10);
    line = common::trim(line.substr(close + 1));
  }
  std::vector<std::string> words;
  for (const auto& w : common::split(line, ' '))
    if (!w.empty()) words.push_back(w);
  if (words.size() < 2) return std::nullopt;
  e.uris = words[0];
  e.suites = words[1];
  for (size_t i = 2; i < words.size(); ++i) e.components += (i > 2 ? " " : "") + words[i];
  return e;
}

}  // namespace

common::Result<PrivateSources> deb_src_entries(const std::vector<AptSourcesFile>& files) {
  std::vector<Entry> entries;
  for (const auto& f : files) {
    if (f.name.ends_with(".sources")) {
      for (auto& s : deb822_stanzas(f.text)) {
        auto types = common::split(s["types"], ' ');
        if (std::find(types.begin(), types.end(), "deb") == types.end()) continue;
        if (s.count("enabled") && s["enabled"] == "no") continue;
        entries.push_back({s["uris"], s["suites"], s["components"], s["signed-by"]});
      }
    } else {
      for (const auto& line : common::split(f.text, '\n'))
        if (auto e = one_line_entry(line)) entries.push_back(*e);
    }
  }
  if (entries.empty()) return Error{"no 'deb' entries in the system's apt sources to derive deb-src entries from"};
  PrivateSources out;
  std::set<std::string> seen;
  for (const auto& e : entries) {
    std::string stanza = "Types: deb-src\nURIs: " + e.uris + "\nSuites: " + e.suites + "\n";
    if (!e.components.empty()) stanza += "Components: " + e.components + "\n";
    if (!e.signed_by.empty()) stanza += "Signed-By: " + e.signed_by + "\n";
    if (seen.insert(stanza).second) out.deb822 += (out.deb822.empty() ? "" : "\n") + stanza;
    for (const auto& suite : common::split(e.suites, ' '))
      if (out.release.empty() && !suite.empty() && suite.find_first_of("-/") == std::string::npos) out.release = suite;
  }
  return out;
}

bool on_path(const std::string& program) {
  const char* path = getenv("PATH");
  for (const auto& dir : common::split(path ? path : "/usr/bin:/bin", ':'))
    if (!dir.empty() && access((fs::path(dir) / program).c_str(), X_OK) == 0) return true;
  return false;
}

DebianSources::DebianSources(fs::path root, std::function<void(const std::string&)> progress)
    : root_(std::move(root)), apt_(root_ / "apt"), progress_(std::move(progress)) {}

std::vector<std::string> DebianSources::apt_options() const {
  std::vector<std::string> o = {"-o", "Dir::Etc::SourceList=" + (apt_ / "sources.list").string(),
                                "-o", "Dir::Etc::SourceParts=" + (apt_ / "sources.list.d").string(),
                                "-o", "Dir::State::Lists=" + (apt_ / "lists").string(),
                                "-o", "Dir::Cache=" + (apt_ / "cache").string(),
                                "-o", "Acquire::Retries=2"};
  // As root apt hands downloads to the _apt user, who cannot write into our
  // directories; it would fall back with a warning on every file.
  if (geteuid() == 0) o.insert(o.end(), {"-o", "APT::Sandbox::User=root"});
  return o;
}

common::Status DebianSources::prepare() {
  using Tool = std::pair<const char*, const char*>;
  for (const auto& [tool, package] : {Tool{"apt-get", "apt"}, Tool{"dpkg-source", "dpkg-dev"}})
    if (!on_path(tool)) return Error{std::string(tool) + " not found: install " + package + " (scripts/setup does)"};
  std::vector<AptSourcesFile> files;
  if (auto t = common::read_file("/etc/apt/sources.list"); t.ok()) files.push_back({"sources.list", *t});
  std::error_code ec;
  std::vector<fs::path> parts;
  for (const auto& e : fs::directory_iterator("/etc/apt/sources.list.d", ec)) parts.push_back(e.path());
  std::sort(parts.begin(), parts.end());
  for (const auto& p : parts)
    if (p.extension() == ".sources" || p.extension() == ".list")
      if (auto t = common::read_file(p); t.ok()) files.push_back({p.filename().string(), *t});
  auto sources = deb_src_entries(files);
  if (!sources) return sources.error();
  release_ = sources->release;
  for (const auto& d : {apt_ / "sources.list.d", apt_ / "lists" / "partial", apt_ / "cache" / "archives" / "partial"}) {
    fs::create_directories(d, ec);
    if (ec) return Error{"cannot create " + d.string() + ": " + ec.message()};
  }
  auto list = apt_ / "sources.list.d" / "driftwatch-src.sources";
  auto current = common::read_file(list);
  bool changed = !current.ok() || *current != sources->deb822;
  if (changed) {
    if (auto s = write_file(apt_ / "sources.list", "# driftwatch: entries are in sources.list.d\n"); !s) return s;
    if (auto s = write_file(list, sources->deb822); !s) return s;
  }
  bool have_lists = false;
  for (const auto& e : fs::directory_iterator(apt_ / "lists", ec))
    have_lists = have_lists || e.path().filename().string().find("Sources") != std::string::npos;
  prepared_ = true;
  if (changed || !have_lists) return update();
  return common::Ok{};
}

common::Status DebianSources::update() {
  if (progress_) progress_("apt-get update (private configuration in " + apt_.string() + ")");
  common::ProcessSpec spec;
  spec.argv = {"apt-get"};
  auto o = apt_options();
  spec.argv.insert(spec.argv.end(), o.begin(), o.end());
  spec.argv.insert(spec.argv.end(), {"-q", "update"});
  spec.timeout = std::chrono::minutes(5);
  auto r = common::run_process(spec);
  if (!r) return r.error();
  if (!r->ok() || r->output.find("\nE: ") != std::string::npos || r->output.starts_with("E: "))
    return Error{"apt-get update failed (" + r->describe() + "): " + common::last_line(r->output)};
  updated_ = true;
  return common::Ok{};
}

common::Result<FetchedSource> DebianSources::fetch(const std::string& package, const fs::path& dest) {
  if (!prepared_) {
    if (auto s = prepare(); !s) return s.error();
  }
  std::error_code ec;
  fs::create_directories(dest, ec);
  auto attempt = [&](bool release) {
    fs::remove_all(dest, ec);
    fs::create_directories(dest, ec);
    common::ProcessSpec spec;
    spec.argv = {"apt-get"};
    auto o = apt_options();
    spec.argv.insert(spec.argv.end(), o.begin(), o.end());
    spec.argv.insert(spec.argv.end(), {"-q", "source"});
    if (release && !release_.empty()) spec.argv.insert(spec.argv.end(), {"-t", release_});
    spec.argv.push_back(package);
    spec.cwd = dest;
    spec.timeout = std::chrono::minutes(10);
    return common::run_process(spec);
  };
  auto r = attempt(false);
  if (r.ok() && !r->ok()) r = attempt(true);
  if (r.ok() && !r->ok() && !updated_) {  // stale lists name versions the mirror dropped
    if (auto s = update(); !s) return s.error();
    r = attempt(false);
    if (r.ok() && !r->ok()) r = attempt(true);
  }
  if (!r) return r.error();
  if (!r->ok())
    return Error{"apt-get source " + package + " failed (" + r->describe() + "): " + common::last_line(r->output)};
  FetchedSource out;
  for (const auto& e : fs::directory_iterator(dest, ec)) {
    if (e.is_directory()) out.source_dir = e.path();
    if (e.path().extension() == ".dsc") {
      auto dsc = common::read_file(e.path());
      if (!dsc) return dsc.error();
      for (const auto& line : common::split(*dsc, '\n'))
        if (line.starts_with("Version:") && out.version.empty()) out.version = common::trim(line.substr(8));
    }
  }
  if (out.source_dir.empty()) return Error{"apt-get source " + package + " unpacked nothing (is dpkg-dev installed?)"};
  return out;
}

}  // namespace evaluator
