#pragma once
// The compiler build a command works with: a check-in of a repository (built,
// or served from the cache), a cache entry, or any directory holding the
// recipe's artifacts (a nightly toolchain's install prefix).
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "builder/generations.h"
#include "builder/recipe.h"
#include "db/store.h"
#include "policy/compiler.h"
#include "tracker/checkin_build.h"

namespace sweep {

/// The recipe of a --build given without --recipe: the sample history's.
inline constexpr const char* kDefaultRecipe = "sample-compiler";

struct BuildRequest {
  std::string build;  ///< a git rev of `repo`, a cache entry, or a toolchain directory
  std::string repo;
  std::string recipe;  ///< "": not given (kDefaultRecipe; a cache entry's own)
  int jobs = 1;
};

struct SelectedBuild {
  policy::CompilerInvocation compiler;
  std::string commit;       ///< full sha, "" if unknown
  std::string repo;         ///< repository location, "" if unknown
  std::string label;        ///< for people: "1a2b3c4d5e6f 2026-01-05" or the directory
  std::filesystem::path artifact_dir;
  /// The recipe's artifacts: name → the file `compiler` runs (hashed to find an identical compiler's evaluation).
  std::map<std::string, std::filesystem::path> artifacts;
  std::optional<db::Id> build_id;  ///< when recorded in the database
  /// For a build from the cache: its generation, held while this selection
  /// lives (a rebuild meanwhile removes nothing `compiler` runs).
  std::shared_ptr<const builder::CachePin> pin;
};

/// Builds or finds the requested compiler; records it when `database` is given.
/// Throws common::Fatal (one line) when it cannot, e.g. a check-in that does not build.
SelectedBuild select_build(const std::filesystem::path& data_dir, const BuildRequest& request, db::Database* database,
                           const std::function<void(const std::string&)>& log = {});

/// The selection for a check-in already built (ok) in this process. The
/// compile command comes from the recipe in use.
SelectedBuild selected_from(const tracker::GitRepo& repo, const builder::Recipe& recipe,
                            const tracker::CheckinBuild& build, std::optional<db::Id> build_id);

/// A directory holding every artifact of the recipe (e.g. bin/clang, bin/opt
/// of an install prefix); the error names the first artifact missing.
common::Result<SelectedBuild> select_toolchain(const std::filesystem::path& dir, const builder::Recipe& recipe);

/// `jobs` when positive, else one per core.
int jobs_or_cores(int jobs);

}  // namespace sweep
