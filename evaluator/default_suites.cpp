#include "common/file_lock.h"
#include "evaluator/default_suites.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "common/process.h"
#include "common/read_file.h"
#include "common/text.h"
#include "evaluator/corpus.h"
#include "evaluator/debian_source.h"
#include "evaluator/files.h"
#include "evaluator/suite_builder.h"

namespace evaluator {

using common::Error;
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// What a finished package directory records; written last, so a directory
// without it (an interrupted build) is rebuilt from scratch.
struct PackageStamp {
  std::string version, recipe_hash, source_dir;
};

constexpr const char* kStampFile = "package.json";
constexpr const char* kBuildSubdir = "_dw_build";  // inside the tree, so generated sources get tree-relative names

std::optional<PackageStamp> read_stamp(const fs::path& dir) {
  auto text = common::read_file(dir / kStampFile);
  if (!text) return std::nullopt;
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  return PackageStamp{j.value("version", ""), j.value("recipe_hash", ""), j.value("source_dir", "")};
}

std::vector<std::string> tree_files(const fs::path& root) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    auto name = it->path().filename().string();
    if (it->is_directory() && (name == kBuildSubdir || name == ".pc" || name == "debian")) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file()) out.push_back(it->path().lexically_relative(root).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The line of a build log that says what went wrong: the first error from a
// tool (make's own "*** Error" lines only repeat it), else the last line.
std::string first_error(const std::string& log) {
  for (const auto& line : common::split(log, '\n')) {
    std::string lower = line;
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    if (lower.find("error") != std::string::npos && line.find("***") == std::string::npos) return common::trim(line);
  }
  return common::last_line(log);
}

class PackageBuilder {
 public:
  PackageBuilder(const SuiteSpec& spec, const DefaultSuiteOptions& o, DebianSources& apt)
      : spec_(spec), o_(o), apt_(apt) {}

  void say(const std::string& pkg, const std::string& what, std::optional<double> seconds = std::nullopt) const {
    if (!o_.progress) return;
    o_.progress(fmt::format("{}: {}: {}{}", spec_.name, pkg, what,
                            seconds ? " (" + common::format_seconds(*seconds) + ")" : ""));
  }

  // Fetches and builds `p` unless its directory is up to date; yields its compile commands.
  common::Result<std::vector<CompileCommand>> ensure_built(const PackageRecipe& p, PackageReport& report,
                                                           fs::path& tree) {
    auto dir = sources_root(o_.data_dir) / p.name;
    auto lock = common::FileLock::acquire(sources_root(o_.data_dir) / ("." + p.name + ".lock"));
    if (!lock) return lock.error();
    auto stamp = read_stamp(dir);
    if (stamp && stamp->recipe_hash == p.content_hash && !o_.rebuild) {
      if (auto commands = load_commands(dir); commands.ok()) {
        report.cached = true;
        report.version = stamp->version;
        tree = dir / stamp->source_dir;
        return commands;
      }
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
    if (ec) return Error{"cannot clear " + dir.string() + ": " + ec.message()};
    auto t = Clock::now();
    auto fetched = apt_.fetch(p.name, dir / "download");
    if (!fetched) return fetched.error();
    report.version = fetched->version;
    tree = fetched->source_dir;
    say(p.name, "fetched " + report.version, since(t));
    auto log = dir / "build.log";
    if (!p.prepare.empty()) {
      t = Clock::now();
      if (auto s = run_shell(p.prepare, tree, log, false, dir); !s) return s.error();
      say(p.name, "prepared", since(t));
    }
    t = Clock::now();
    if (!p.build.empty()) {
      if (auto s = run_shell(p.build, tree, log, true, dir); !s) return s.error();
    } else {
      auto commands = recorded_commands(p.compile, tree, tree_files(tree), o_.tools);
      if (auto s = write_file(dir / "compile_commands.json", format_compile_commands(commands)); !s) return s.error();
    }
    auto commands = load_commands(dir);
    if (!commands) return commands.error();
    say(p.name,
        fmt::format("{}: {} compiles", p.build.empty() ? "recorded recipe" : "built under bear", commands->size()),
        since(t));
    nlohmann::ordered_json j = {{"name", p.name},
                                {"version", report.version},
                                {"recipe_hash", p.content_hash},
                                {"source_dir", tree.lexically_relative(dir).string()}};
    if (auto s = write_file(dir / kStampFile, j.dump(2) + "\n"); !s) return s.error();
    return commands;
  }

 private:
  common::Result<std::vector<CompileCommand>> load_commands(const fs::path& dir) {
    auto file = dir / "compile_commands.json";
    auto text = common::read_file(file);
    if (!text) return text.error();
    return parse_compile_commands(*text, file.string());
  }

  common::Status run_shell(const std::string& command, const fs::path& tree, const fs::path& log, bool under_bear,
                           const fs::path& dir) {
    auto filled = fill_placeholders(command, o_.jobs, o_.tools, (tree / kBuildSubdir).string());
    common::ProcessSpec spec;
    if (under_bear) {
      if (!on_path("bear")) return Error{"bear not found: install bear (scripts/setup does)"};
      spec.argv = {"bear", "--output", (dir / "compile_commands.json").string(), "--"};
    }
    spec.argv.insert(spec.argv.end(), {"sh", "-c", filled});
    spec.cwd = tree;
    spec.log_file = log;
    spec.env = {{"CC", o_.tools.cc}, {"CXX", o_.tools.cxx}, {"LC_ALL", "C"}};
    spec.timeout = std::chrono::minutes(30);
    auto r = common::run_process(spec);
    if (!r) return r.error();
    if (r->ok()) return common::Ok{};
    auto text = common::read_file(log);
    return Error{fmt::format("package {}: `{}` failed ({}): {} (log: {})", dir.filename().string(), filled,
                             r->describe(), text ? first_error(*text) : "", log.string())};
  }

  const SuiteSpec& spec_;
  const DefaultSuiteOptions& o_;
  DebianSources& apt_;
};

std::optional<DefaultSuiteReport> up_to_date(const SuiteSpec& spec, const fs::path& dir) {
  auto manifest = read_suite_manifest(dir);
  if (!manifest || manifest->origin.recipe_hash != spec.content_hash) return std::nullopt;
  auto verified = load_suite(dir);  // a damaged suite is rebuilt, not trusted
  if (!verified) return std::nullopt;
  DefaultSuiteReport r;
  r.suite = *verified;
  r.dir = dir;
  r.cached = true;
  return r;
}

}  // namespace

fs::path sources_root(const fs::path& data_dir) { return data_dir / "sources"; }

common::Result<DefaultSuiteReport> build_default_suite(const SuiteSpec& spec, const DefaultSuiteOptions& o) {
  auto start = Clock::now();
  auto suites = suites_root(o.data_dir);
  auto final_dir = suites / spec.name;
  if (!o.rebuild) {  // as a reader: a suite that is up to date need not wait for the evaluations reading it
    auto reading = common::FileLock::acquire(suite_lock_file(final_dir), common::LockMode::Shared);
    if (!reading) return reading.error();
    if (auto cached = up_to_date(spec, final_dir)) return *cached;
  }
  auto lock = common::FileLock::acquire(suite_lock_file(final_dir), common::LockMode::Exclusive, [&] {
    if (o.progress) o.progress(spec.name + ": waiting for the evaluations reading this suite to finish");
  });
  if (!lock) return lock.error();
  if (!o.rebuild)
    if (auto cached = up_to_date(spec, final_dir)) return *cached;
  DebianSources apt(sources_root(o.data_dir), o.progress);  // prepared on the first fetch
  auto scratch = ScratchDir::create(suites, spec.name);
  if (!scratch) return scratch.error();
  DefaultSuiteReport r;
  r.suite.name = spec.name;
  r.suite.description = spec.description;
  r.suite.origin = {"debian-packages", "", {}, spec.content_hash};
  PackageBuilder builder(spec, o, apt);
  for (const auto& p : spec.packages) {
    PackageReport pr;
    pr.name = p.name;
    fs::path tree;
    auto commands = builder.ensure_built(p, pr, tree);
    if (!commands) return commands.error();
    pr.compiles = commands->size();
    ExtractOptions eo;
    eo.jobs = o.jobs;
    eo.root = tree;
    eo.name_prefix = p.name + "/";
    eo.exclude = p.exclude;
    eo.opt_level = spec.opt_level;
    eo.tools = o.tools;
    pr.extract = extract_bitcode(*commands, scratch->path(), eo);
    builder.say(p.name, "bitcode: " + summarize(pr.extract));
    auto part = suite_from_extraction(spec.name, "", {}, pr.extract.modules, p.name);
    r.suite.modules.insert(r.suite.modules.end(), part.modules.begin(), part.modules.end());
    auto notes = apply_link_groups(r.suite, p.links, p.name, p.name + "/", pr.extract.failures);
    r.notes.insert(r.notes.end(), notes.begin(), notes.end());
    r.suite.origin.packages.push_back({p.name, pr.version});
    r.packages.push_back(std::move(pr));
    if (o.package_done) o.package_done(p.name, static_cast<int>(r.packages.size()), static_cast<int>(spec.packages.size()));
  }
  normalize_suite(r.suite);
  if (r.suite.modules.empty()) return Error{"suite " + spec.name + ": no TU of any package produced bitcode"};
  CorpusDescription corpus;
  corpus.modules = module_names(r.suite);
  if (auto s = write_corpus_description(scratch->path(), corpus); !s) return s.error();
  if (auto s = write_suite_manifest(scratch->path(), r.suite); !s) return s.error();
  if (auto s = scratch->commit(final_dir); !s) return s.error();
  r.dir = final_dir;
  r.seconds = since(start);
  return r;
}

}  // namespace evaluator
