#pragma once
// Running a recipe on a checked-out source tree, and the artifact cache that
// makes sure no (commit, recipe) pair is ever built twice.
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "builder/recipe.h"

namespace builder {

// The one table of build outcomes, as stored in the database.
#define DRIFTWATCH_BUILD_OUTCOMES(X)       \
  X(Ok, "ok")                              \
  X(ConfigureFailed, "configure-failed")   \
  X(BuildFailed, "build-failed")           \
  X(Timeout, "timeout")                    \
  X(MissingArtifact, "missing-artifact")

enum class Outcome {
#define X(id, name) id,
  DRIFTWATCH_BUILD_OUTCOMES(X)
#undef X
};

std::string_view outcome_name(Outcome o);
std::optional<Outcome> parse_outcome(std::string_view name);

struct BuildResult {
  Outcome outcome = Outcome::BuildFailed;
  double seconds = 0;
  std::string message;  ///< one line: why it failed, or "" when ok
  std::map<std::string, std::filesystem::path> artifacts;  ///< name → file in the cache
  std::filesystem::path log;
  std::string log_tail;  ///< the last lines of the log, for the database
  bool from_cache = false;
  bool configured = false;  ///< configure ran (rather than being skipped)
  /// Why a cached result was not served and the check-in was built again
  /// (see read_cached), or "" when there was none or it was not asked for.
  std::string rebuilt_because;
  /// A timeout or a step killed by a signal (out of memory, a full disk, an
  /// operator): it says nothing about the check-in, so it is not cached and
  /// the next build tries again. Only a real failure is final.
  bool transient = false;
  /// Transient because commands under ninja failed without a word
  /// (ninja_failed_without_a_word): killed, most likely, but a check-in's
  /// silent failure looks the same, so a job's last attempt records it.
  bool unexplained = false;
  /// The recipe's compile argv for these artifacts ({input}/{output} left in),
  /// so an artifact directory alone is enough to evaluate.
  std::vector<std::string> compile;
  std::string ml_flag_prefix;
  std::vector<std::string> cc1;  ///< the recipe's [compile] cc1, rendered (see Recipe::cc1)
  bool share_agreeing_defaults = false;  ///< the recipe's (see Recipe::share_agreeing_defaults)
  std::chrono::seconds compile_timeout{Recipe::kDefaultCompileTimeout};  ///< the recipe's [compile] timeout
};

struct BuildPaths {
  std::filesystem::path source;
  std::filesystem::path build;
  std::filesystem::path data;
  std::filesystem::path cache_entry;  ///< see cache_entry_dir()
  int jobs = 1;
};

/// `<data>/cache/<recipe name>-<recipe hash>/<commit sha>`: a symlink to the
/// entry's current generation (builder/generations.h).
std::filesystem::path cache_entry_dir(const std::filesystem::path& data, const Recipe& recipe, const std::string& sha);

/// The cached result of a finished build (ok or not), if there is one. An
/// entry that holds a result but cannot be served (an artifact missing or
/// changed since it was built) gives none, and says why in *damaged (left
/// empty otherwise).
std::optional<BuildResult> read_cached(const std::filesystem::path& cache_entry, std::string* damaged = nullptr);

/// Configures (unless the recipe's marker exists and the build directory was
/// configured by the same configure command, environment and launcher; a
/// different one starts the build directory afresh), builds, copies the
/// artifacts into a new generation of the cache entry, records the result
/// there and publishes it, unless it is transient. A failure is a result, never an exception; the recipe's timeout
/// kills the process group.
BuildResult run_build(const Recipe& recipe, const BuildPaths& paths);

/// Sets r.compile and r.ml_flag_prefix from `recipe`'s [compile] for r's
/// artifacts (cleared when it has none or the build failed). The cache key
/// leaves [compile] out, so a cached result must take it from the recipe in
/// use, not from the copy it was stored with.
common::Status use_compile_of(const Recipe& recipe, BuildResult& r);

}  // namespace builder
