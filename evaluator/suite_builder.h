#pragma once
// Building a suite from any compile_commands.json and importing an
// ml-compiler-opt corpus. Both assemble the suite in a scratch directory
// under the suites root and rename it into place only when complete.
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/file_lock.h"
#include "common/result.h"
#include "evaluator/extract.h"
#include "evaluator/suite.h"

namespace evaluator {

/// <data>/suites
std::filesystem::path suites_root(const std::filesystem::path& data_dir);

/// The lock a suite's builds take exclusively: `<parent>/.<name>.lock`.
std::filesystem::path suite_lock_file(const std::filesystem::path& suite_dir);
/// Removes what suite builds killed by a signal left under `suites_dir`
/// (evaluator::clear_interrupted_scratch), of every suite no build holds.
void clear_interrupted_suite_builds(const std::filesystem::path& suites_dir);
/// Keeps a suite driftwatch built from being rebuilt (swapped for another)
/// while it is read: a shared hold on its lock, which its builds wait for.
/// nullopt for a directory no driftwatch build made (no lock file beside it).
common::Result<std::optional<common::FileLock>> hold_suite(const std::filesystem::path& suite_dir);

/// A link group declared by globs over a project's source paths (relative to its root).
struct LinkGroupSpec {
  std::string name;
  LinkKind kind = LinkKind::Program;
  std::vector<std::string> modules;  ///< glob_match patterns
  std::vector<std::string> exclude;  ///< glob_match patterns taken out again
  std::vector<std::string> flags;
};

/// Adds the groups to `suite`, matching specs against the modules of `package`
/// (all modules when empty) by source path. A group whose pattern matches
/// nothing, or that would miss a TU that failed, is left out and named in the returned notes.
std::vector<std::string> apply_link_groups(Suite& suite, const std::vector<LinkGroupSpec>& specs,
                                           const std::string& package, const std::string& name_prefix,
                                           const std::vector<TuFailure>& failures);

struct SuiteBuildReport {
  Suite suite;
  std::filesystem::path dir;
  ExtractReport extract;           ///< empty for imports
  std::vector<std::string> notes;  ///< link groups left out and the like
};

struct CompileCommandsSuiteOptions {
  std::string name;
  std::string description;
  ExtractOptions extract;
  std::vector<LinkGroupSpec> link_groups;
};

/// `suite build --from-compile-commands FILE --name NAME`. Fails only when the
/// input is unusable or no TU compiles; failed TUs are in the report.
common::Result<SuiteBuildReport> build_suite_from_compile_commands(const std::filesystem::path& compile_commands,
                                                                   const CompileCommandsSuiteOptions& options,
                                                                   const std::filesystem::path& suites_dir);

/// `suite build --import-corpus DIR --name NAME`: copies the corpus unchanged
/// and writes the manifest (languages from the .cmd files).
common::Result<SuiteBuildReport> import_corpus(const std::filesystem::path& corpus_dir, const std::string& name,
                                               const std::filesystem::path& suites_dir,
                                               const std::function<void(const std::string&)>& progress = {});

/// Builds the Suite value for extracted modules (pure).
Suite suite_from_extraction(const std::string& name, const std::string& description, const SuiteOrigin& origin,
                            const std::vector<ExtractedModule>& modules, const std::string& package);

}  // namespace evaluator
