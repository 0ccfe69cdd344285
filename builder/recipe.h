#pragma once
// Build recipes (TOML): how to configure and build one check-in of a compiler
// and which files it yields. Parsing and rendering are pure.
#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/result.h"

namespace builder {

struct Recipe {
  std::string name;
  std::string description;
  std::string configure;         ///< shell command; may be empty
  std::string configure_marker;  ///< relative to {build}: skip configure once it exists
  std::string build;             ///< shell command
  std::map<std::string, std::string> env;
  std::chrono::seconds timeout{3600};
  std::string launcher = "ccache";  ///< compiler launcher, "" for none
  /// ccache's remote storage shared by a farm (redis://host:port, http://…),
  /// given to the build steps as CCACHE_REMOTE_STORAGE unless the worker's
  /// environment sets it. Not part of either hash: where compiler outputs are
  /// shared does not change them.
  std::string ccache_remote_storage;
  /// The build's parallelism: `driftwatch build`'s default, and at most this
  /// many in sweeps and workers (an LLVM link that needs 8 GiB a job must not
  /// run 64 at once at night). 0: no limit (one per core).
  int jobs = 0;
  std::map<std::string, std::string> artifacts;  ///< name → path, usually under {build}
  /// How the evaluator compiles one module: argv with {artifact}, {input},
  /// {output}. Part of content_hash, not of build_hash.
  std::vector<std::string> compile;
  std::string ml_flag_prefix;  ///< put before each LLVM option ("-mllvm" for clang)
  /// The program that takes a corpus module's own clang -cc1 line ([compile]
  /// cc1, e.g. "{clang}"); empty when the compiler cannot (dwcc).
  std::vector<std::string> cc1;
  /// [compile] share_agreeing_defaults: where the policy took the default's
  /// decision at every call site, the learned object is taken for the
  /// default's (evaluator::EvaluationOptions). Only for compile lines where
  /// LLVM's ML size cap never stops the ML inliner on the default's own
  /// trajectory, as at -Oz; at -O2 it does. Not part of either hash: it
  /// changes how many compiles an evaluation makes, not what it measures.
  bool share_agreeing_defaults = false;
  /// [compile] timeout: how long one module's compile may take before it
  /// counts as a timeout (under the policy, as the policy's failure). Large
  /// translation units of a real project compiled by a large compiler need
  /// more than the default. Part of content_hash when set: it decides which
  /// compiles count as failed.
  std::chrono::seconds compile_timeout{kDefaultCompileTimeout};
  static constexpr std::chrono::seconds kDefaultCompileTimeout{120};
  /// Of the recipe's meaning, not its formatting: the build and how modules
  /// are compiled with it. Names the recipe in the database and in job keys,
  /// so a changed [compile] section starts new series instead of mixing two
  /// compile lines in one.
  std::string content_hash;
  /// Of the build alone (configure, build, env, launcher, artifacts): the
  /// compile cache's key, so a changed [compile] section rebuilds nothing.
  std::string build_hash;
};

/// The jobs a sweep or a worker builds `recipe` with, given its own `jobs`.
inline int capped_jobs(const Recipe& recipe, int jobs) {
  return recipe.jobs > 0 && recipe.jobs < jobs ? recipe.jobs : jobs;
}

/// The values recipes may refer to as {source}, {build}, {jobs}, {launcher}, {data}.
struct Placeholders {
  std::filesystem::path source;
  std::filesystem::path build;
  std::filesystem::path data;
  int jobs = 1;
};

/// A recipe with every placeholder filled in: exactly what would run.
struct RenderedRecipe {
  std::string configure;
  std::string build;
  std::map<std::string, std::string> env;
  std::map<std::string, std::filesystem::path> artifacts;
  std::filesystem::path configure_marker;
};

/// Parses TOML; errors name `origin` and the missing or unknown key.
common::Result<Recipe> parse_recipe(const std::string& text, const std::string& origin);
/// A recipe file, or a shipped one by name ("sample-compiler", "llvm-project").
common::Result<Recipe> load_recipe(const std::string& file_or_name);
/// Names of the shipped recipes.
std::vector<std::string> shipped_recipes();
/// Fills placeholders; an unknown {placeholder} is an error naming it. In the
/// configure and build commands each value is one shell word (quoted as
/// needed), so recipes write {build}, never '{build}'.
common::Result<RenderedRecipe> render(const Recipe& recipe, const Placeholders& values);
/// The [compile] cc1 words with artifact paths filled in; empty when the recipe has none.
common::Result<std::vector<std::string>> render_cc1(const Recipe& recipe,
                                                    const std::map<std::string, std::filesystem::path>& artifacts);
/// The compile argv with artifact paths filled in ({input}/{output} stay).
common::Result<std::vector<std::string>> render_compile(const Recipe& recipe,
                                                        const std::map<std::string, std::filesystem::path>& artifacts);

}  // namespace builder
