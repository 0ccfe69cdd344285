#pragma once
// A persistent checkout of one (repository, recipe) pair. Moving it to another
// commit rewrites only the files that differ, so unchanged files keep their
// mtimes and the next build is incremental. A checkout interrupted by a crash,
// a file it wrote edited by hand, and a file added to the sources (by hand or
// by a build step) are repaired on the next move.
#include <filesystem>
#include <string>
#include <vector>

#include "common/result.h"
#include "tracker/git.h"

namespace tracker {

struct CheckoutStats {
  int written = 0;    ///< files created or rewritten
  int removed = 0;    ///< files deleted
  int unchanged = 0;  ///< files left alone (mtime kept)
  bool repaired = false;  ///< the previous checkout was incomplete
  /// Submodules (gitlinks) of the check-in, by path: not checked out, since
  /// driftwatch writes the repository's own files only.
  std::vector<std::string> submodules;
};

class WorkTree {
 public:
  /// `dir` holds src/ (the checkout), build/ (for the recipe) and the state.
  explicit WorkTree(std::filesystem::path dir);

  std::filesystem::path source_dir() const { return dir_ / "src"; }
  std::filesystem::path build_dir() const { return dir_ / "build"; }
  const std::filesystem::path& dir() const { return dir_; }
  /// The commit the checkout holds, or "" when none or incomplete.
  std::string current() const;

  /// Moves the checkout to `sha`. Holds an exclusive lock on the work tree
  /// while it works, so two processes never interleave.
  common::Result<CheckoutStats> checkout(const GitRepo& repo, const std::string& sha);

 private:
  std::filesystem::path dir_;
};

/// The work tree directory of (repository, recipe) under the data directory.
std::filesystem::path worktree_dir(const std::filesystem::path& data_dir, const std::filesystem::path& repo,
                                   const std::string& recipe_name);

}  // namespace tracker
