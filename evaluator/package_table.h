#pragma once
// The default suites' table, declared once in samples/suites/default.toml
// (embedded in the binary): which Debian source package goes into which suite,
// how it is built, and which of its modules link together. Parsing is pure.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "evaluator/compile_commands.h"
#include "evaluator/suite_builder.h"

namespace evaluator {

/// A recorded compile recipe, for packages whose own build system is slow or
/// needs Debian's packaging machinery: these sources, these flags, no build.
struct CompileRecipe {
  std::vector<std::string> sources;  ///< glob_match patterns relative to the source tree
  std::vector<std::string> exclude;
  std::vector<std::string> flags;
};

struct PackageRecipe {
  std::string name;  ///< the Debian source package
  std::string suite;
  std::string prepare;  ///< shell, in the source tree, before the build; may be empty
  std::string build;    ///< shell, in the source tree, under bear; empty: use `compile`
  CompileRecipe compile;
  std::vector<std::string> exclude;  ///< TUs (source globs) kept out of the suite
  std::vector<LinkGroupSpec> links;
  std::string content_hash;  ///< of everything above: a change rebuilds the package
};

struct SuiteSpec {
  std::string name, description;
  std::string opt_level;  ///< replaces every TU's -O level (e.g. "-Oz"); empty: each package's own
  std::vector<PackageRecipe> packages;
  std::string content_hash;  ///< recorded in the manifest; a change rebuilds the suite
};

struct SuiteTable {
  std::vector<SuiteSpec> suites;  ///< in declaration order
  const SuiteSpec* find(std::string_view name) const;
};

/// Parses the table. Errors name `origin` and the package; a package listed
/// twice (so train and holdout can never share one) or in an undeclared suite is refused.
common::Result<SuiteTable> parse_suite_table(std::string_view toml, const std::string& origin);
/// The shipped table (throws common::Fatal if it does not parse: a build defect).
const SuiteTable& default_suite_table();

/// Fills {jobs} {cc} {cxx} {build} in a package's shell command.
std::string fill_placeholders(std::string_view command, int jobs, const ClangTools& tools,
                              const std::string& build_dir);
/// The compile commands of a recorded recipe, given the tree's files (relative paths).
std::vector<CompileCommand> recorded_commands(const CompileRecipe& recipe, const std::filesystem::path& source_dir,
                                              const std::vector<std::string>& files, const ClangTools& tools);

}  // namespace evaluator
