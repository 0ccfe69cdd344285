#pragma once
// `--build REV|DIR [--repo R] [--recipe X]`: the compiler build a command
// works with — a check-in (built or served from the cache) or an artifact
// directory from the cache.
#include <filesystem>
#include <optional>
#include <string>

#include "cli/context.h"
#include "db/store.h"
#include "policy/compiler.h"
#include "tracker/checkin_build.h"

namespace CLI {
class App;
}

namespace cli {

struct BuildSelector {
  std::string build;  ///< a git rev of --repo, or an artifact directory
  std::string repo;
  std::string recipe = "sample-compiler";
  int jobs = 0;
  void attach(CLI::App& sub);
};

struct SelectedBuild {
  policy::CompilerInvocation compiler;
  std::string commit;       ///< full sha, "" if unknown
  std::string repo;         ///< repository location, "" if unknown
  std::string label;        ///< for people: "1a2b3c4d5e6f 2026-01-05" or the directory
  std::filesystem::path artifact_dir;
  std::optional<db::Id> build_id;  ///< when recorded in the database
};

/// Builds or finds the selected compiler; records it when `database` is given.
/// Throws common::Fatal (one line) when it cannot, e.g. a check-in that does not build.
SelectedBuild select_build(const Context& ctx, const BuildSelector& selector, db::Database* database);

/// The selection for a check-in already built (ok) in this process.
SelectedBuild selected_from(const tracker::GitRepo& repo, const builder::Recipe& recipe,
                            const tracker::CheckinBuild& build, std::optional<db::Id> build_id);

/// --jobs, else one per core.
int jobs_or_cores(int jobs);

}  // namespace cli
