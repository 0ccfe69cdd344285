#pragma once
// One check-in, built: check out into the (repository, recipe) work tree, run
// the recipe, or serve the result from the artifact cache (its [compile] taken
// from the recipe in use). Timeouts and signal kills are not cached.
#include <filesystem>
#include <functional>
#include <string>

#include "builder/build.h"
#include "tracker/commit.h"
#include "tracker/git.h"
#include "tracker/worktree.h"

namespace tracker {

struct CheckinBuildOptions {
  std::filesystem::path data_dir;
  int jobs = 1;
  bool rebuild = false;  ///< ignore (and replace) a cached result
  /// Told once when another process builds in the same work tree and this
  /// build waits for it: an unattended sweep would otherwise hang in silence.
  std::function<void(const std::string&)> on_wait;
};

struct CheckinBuild {
  CommitInfo commit;
  builder::BuildResult result;
  CheckoutStats checkout;  ///< zero when served from the cache
};

/// Never throws for a failing build: the outcome says what happened. The
/// error case is for what stops everything (an unwritable work tree, say).
common::Result<CheckinBuild> build_checkin(const GitRepo& repo, const builder::Recipe& recipe,
                                           const CommitInfo& commit, const CheckinBuildOptions& options);

}  // namespace tracker
