#include "evaluator/suite_builder.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <set>

#include "common/hash.h"
#include "common/read_file.h"
#include "common/text.h"
#include "evaluator/corpus.h"
#include "evaluator/files.h"
#include "evaluator/object_size.h"

namespace evaluator {

using common::Error;
namespace fs = std::filesystem;

namespace {

bool matches_any(const std::vector<std::string>& globs, const std::string& path) {
  return std::any_of(globs.begin(), globs.end(), [&](const auto& g) { return glob_match(g, path); });
}

bool in_group(const LinkGroupSpec& g, const std::string& source) {
  return matches_any(g.modules, source) && !matches_any(g.exclude, source);
}

common::Status finish(const fs::path& scratch, const Suite& suite, const CorpusDescription& corpus) {
  if (auto s = write_corpus_description(scratch, corpus); !s) return s;
  return write_suite_manifest(scratch, suite);
}

}  // namespace

fs::path suites_root(const fs::path& data_dir) { return data_dir / "suites"; }

fs::path suite_lock_file(const fs::path& suite_dir) {
  auto dir = suite_dir.lexically_normal();
  if (dir.filename().empty()) dir = dir.parent_path();  // "suites/smoke/"
  return dir.parent_path() / ("." + dir.filename().string() + ".lock");
}

void clear_interrupted_suite_builds(const fs::path& suites_dir) {
  clear_interrupted_scratch(suites_dir, [&](const std::string& name) { return suite_lock_file(suites_dir / name); });
}

common::Result<std::optional<common::FileLock>> hold_suite(const fs::path& suite_dir) {
  auto file = suite_lock_file(suite_dir);
  std::error_code ec;
  if (!fs::exists(file, ec)) return std::optional<common::FileLock>();
  auto lock = common::FileLock::acquire(file, common::LockMode::Shared);
  if (!lock) return lock.error();
  return std::optional<common::FileLock>(std::move(*lock));
}

Suite suite_from_extraction(const std::string& name, const std::string& description, const SuiteOrigin& origin,
                            const std::vector<ExtractedModule>& modules, const std::string& package) {
  Suite s;
  s.name = name;
  s.description = description;
  s.origin = origin;
  for (const auto& m : modules) s.modules.push_back({m.name, m.sha256, m.language, package, m.source, {}});
  normalize_suite(s);
  return s;
}

std::vector<std::string> apply_link_groups(Suite& suite, const std::vector<LinkGroupSpec>& specs,
                                           const std::string& package, const std::string& name_prefix,
                                           const std::vector<TuFailure>& failures) {
  std::vector<std::string> notes;
  for (const auto& spec : specs) {
    auto group = name_prefix + spec.name;
    auto failed = std::find_if(failures.begin(), failures.end(), [&](const TuFailure& f) {
      return f.name.starts_with(name_prefix) && in_group(spec, f.name.substr(name_prefix.size()));
    });
    // A program missing one of its TUs does not link: better no linked figure than a wrong one.
    if (failed != failures.end()) {
      notes.push_back(fmt::format("link group {} left out: its TU {} failed", group, failed->name));
      continue;
    }
    std::vector<SuiteModule*> members;
    for (auto& m : suite.modules)
      if ((package.empty() || m.package == package) && in_group(spec, m.source)) members.push_back(&m);
    if (members.empty()) {
      notes.push_back(fmt::format("link group {} left out: it matches no module", group));
      continue;
    }
    // A file named outright (usually the one with main) must be there, or the group does not link.
    auto missing = std::find_if(spec.modules.begin(), spec.modules.end(), [&](const std::string& pattern) {
      return pattern.find_first_of("*?") == std::string::npos &&
             std::none_of(members.begin(), members.end(), [&](const SuiteModule* m) { return m->source == pattern; });
    });
    if (missing != spec.modules.end()) {
      notes.push_back(fmt::format("link group {} left out: {} is not among the modules", group, *missing));
      continue;
    }
    for (auto* m : members) m->link_groups.push_back(group);
    suite.link_groups.push_back({group, spec.kind, spec.flags});
  }
  return notes;
}

namespace {

/// A rebuild replaces the suite under evaluations reading it: it waits for
/// them (their shared hold_suite locks), and says so rather than hang mute.
common::Result<common::FileLock> lock_for_rebuild(const fs::path& suite_dir,
                                                  const std::function<void(const std::string&)>& progress) {
  return common::FileLock::acquire(suite_lock_file(suite_dir), common::LockMode::Exclusive, [&] {
    if (progress)
      progress(suite_dir.filename().string() + ": waiting for the evaluations reading this suite to finish");
  });
}

}  // namespace

common::Result<SuiteBuildReport> build_suite_from_compile_commands(const fs::path& compile_commands,
                                                                   const CompileCommandsSuiteOptions& o,
                                                                   const fs::path& suites_dir) {
  if (auto s = check_suite_name(o.name); !s) return s.error();
  auto text = common::read_file(compile_commands);
  if (!text) return text.error();
  auto commands =
      parse_compile_commands(*text, compile_commands.string(), fs::absolute(compile_commands).parent_path());
  if (!commands) return commands.error();
  if (commands->empty()) return Error{compile_commands.string() + ": no compile commands"};
  auto lock = lock_for_rebuild(suites_dir / o.name, o.extract.progress);
  if (!lock) return lock.error();
  auto scratch = ScratchDir::create(suites_dir, o.name);
  if (!scratch) return scratch.error();
  SuiteBuildReport r;
  r.extract = extract_bitcode(*commands, scratch->path(), o.extract);
  if (r.extract.modules.empty()) {
    // One line, with what was left out and the first failure's own
    // diagnostic (its status line alone, "clang: exit status 1:", says nothing).
    std::string first;
    if (!r.extract.failures.empty())
      first =
          "; first: " + r.extract.failures.front().name + ": " + one_line_reason(r.extract.failures.front().message);
    return Error{fmt::format("{}: no TU produced bitcode ({} planned, {} failed{}{})", compile_commands.string(),
                             r.extract.plan.modules.size(), r.extract.failures.size(), skipped_text(r.extract.plan),
                             first)};
  }
  SuiteOrigin origin{"compile-commands", fs::absolute(compile_commands).lexically_normal().string(), {}, {}};
  auto description = o.description.empty() ? "built from " + origin.path : o.description;
  r.suite = suite_from_extraction(o.name, description, origin, r.extract.modules, "");
  r.notes = apply_link_groups(r.suite, o.link_groups, "", o.extract.name_prefix, r.extract.failures);
  CorpusDescription corpus;
  corpus.modules = module_names(r.suite);
  if (auto s = finish(scratch->path(), r.suite, corpus); !s) return s.error();
  r.dir = suites_dir / o.name;
  if (auto s = scratch->commit(r.dir); !s) return s.error();
  return r;
}

common::Result<SuiteBuildReport> import_corpus(const fs::path& corpus_dir, const std::string& name,
                                               const fs::path& suites_dir,
                                               const std::function<void(const std::string&)>& progress) {
  if (auto s = check_suite_name(name); !s) return s.error();
  auto corpus = read_corpus(corpus_dir);
  if (!corpus) return corpus.error();
  if (corpus->has_thinlto)
    return Error{"corpus " + corpus_dir.string() + " is a ThinLTO corpus (has_thinlto): its modules compile against "
                 "their .thinlto.bc index, which driftwatch does not pass; extract the corpus without ThinLTO"};
  // Every module's own line is checked now, before anything is copied, not
  // at each check-in's evaluation, where a bad line would be taken for the
  // policy failing there.
  // The files a module's build wrote beside its object (dependency files,
  // split DWARF) are taken out of its line, and the import says so.
  std::map<std::string, std::vector<std::string>> commands;
  std::set<std::string> removed;
  int stripped = 0;
  if (corpus->global_command_override) {
    std::vector<std::string> gone;
    corpus->global_command_override = without_build_outputs(*corpus->global_command_override, &gone);
    removed.insert(gone.begin(), gone.end());
  }
  for (const auto& m : corpus->modules) {
    auto cmd = read_module_command(corpus_dir, *corpus, m);
    if (!cmd) return cmd.error();
    std::vector<std::string> gone;
    auto kept = without_build_outputs(*cmd, &gone);
    stripped += gone.empty() ? 0 : 1;
    removed.insert(gone.begin(), gone.end());
    if (auto st = check_module_command(m, kept); !st)
      return Error{"corpus " + corpus_dir.string() + ": " + st.error().message};
    // A Debug build's corpus: at -O0 (cc1's default when no -O is given)
    // clang never runs the inliner, so the channel is never opened and each
    // check-in would read as a compiler that does not consult the policy;
    // its functions are optnone for every other compiler too.
    std::string level = "-O0";
    for (const auto& a : kept)
      if (a.starts_with("-O")) level = a;
    if (level == "-O0")
      return Error{"corpus " + corpus_dir.string() + ": module " + m +
                   "'s command line compiles at -O0 (a Debug build's corpus?): the inliner never runs there; extract "
                   "the corpus from an optimized build"};
    commands[m] = std::move(kept);
  }
  auto lock = lock_for_rebuild(suites_dir / name, progress);
  if (!lock) return lock.error();
  auto scratch = ScratchDir::create(suites_dir, name);
  if (!scratch) return scratch.error();
  SuiteBuildReport r;
  r.suite.name = name;
  r.suite.origin = {"imported-corpus", fs::absolute(corpus_dir).lexically_normal().string(), {}, {}};
  r.suite.description = "imported from " + r.suite.origin.path;
  for (const auto& m : corpus->modules) {
    for (const char* ext : {".bc", ".cmd", ".thinlto.bc"}) {
      auto from = module_file(corpus_dir, m, ext);
      if (!fs::exists(from)) continue;  // read_corpus checked the ones that must be there
      auto to = module_file(scratch->path(), m, ext);
      std::error_code ec;
      fs::create_directories(to.parent_path(), ec);
      if (std::string(ext) == ".cmd" && !corpus->global_command_override) {
        if (auto s = write_file(to, format_cmd(commands.at(m))); !s)
          return Error{"module " + m + ": " + s.error().message};
        continue;
      }
      fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
      if (ec) return Error{"module " + m + ": cannot copy " + from.string() + ": " + ec.message()};
      if (std::string(ext) != ".cmd" && !is_llvm_bitcode(to))
        return Error{"module " + m + ": " + from.string() +
                     " is not LLVM bitcode (a Git LFS pointer of a clone made without git-lfs?); nothing was imported"};
    }
    auto sha = common::sha256_file(module_file(scratch->path(), m, ".bc"));
    if (!sha) return Error{"module " + m + ": " + sha.error().message};
    r.suite.modules.push_back({m, *sha, cc1_language(commands.at(m)), "", "", {}});
  }
  normalize_suite(r.suite);
  if (!removed.empty()) {
    std::string names;
    for (const auto& n : removed) names += (names.empty() ? "" : " ") + n;
    auto whose = corpus->global_command_override
                     ? std::string("the corpus's global command line")
                     : fmt::format("the command lines of {} of {} modules", stripped, corpus->modules.size());
    r.notes.push_back(
        fmt::format("removed {} from {}: files the build wrote beside its objects, which every "
                    "evaluation compile would write again",
                    names, whose));
  }
  for (const auto& key : corpus->unknown_keys)
    r.notes.push_back(fmt::format("{}: key \"{}\" is not read (driftwatch reads {}, {} and {}): a misspelling?",
                                  kCorpusDescriptionFile, key, kCorpusDescriptionKeys[0], kCorpusDescriptionKeys[1],
                                  kCorpusDescriptionKeys[2]));
  if (auto s = finish(scratch->path(), r.suite, *corpus); !s) return s.error();
  r.dir = suites_dir / name;
  if (auto s = scratch->commit(r.dir); !s) return s.error();
  return r;
}

}  // namespace evaluator
