#include "tracker/checkin_build.h"

#include "builder/leftover_step.h"
#include "common/file_lock.h"

namespace tracker {
namespace fs = std::filesystem;

namespace {

/// A cached result with [compile] from the recipe in use (the cache key leaves it out).
common::Result<CheckinBuild> from_cache(CheckinBuild out, const builder::Recipe& recipe, builder::BuildResult cached) {
  if (auto st = builder::use_compile_of(recipe, cached); !st) return st.error();
  out.result = std::move(cached);
  return out;
}

}  // namespace

common::Result<CheckinBuild> build_checkin(const GitRepo& repo, const builder::Recipe& recipe,
                                           const CommitInfo& commit, const CheckinBuildOptions& options) {
  CheckinBuild out;
  out.commit = commit;
  auto entry = builder::cache_entry_dir(options.data_dir, recipe, commit.sha);
  std::string damaged;
  // A rebuild removes nothing: its new generation replaces the entry when done.
  if (!options.rebuild)
    if (auto cached = builder::read_cached(entry, &damaged)) return from_cache(std::move(out), recipe, *cached);
  WorkTree tree(worktree_dir(options.data_dir, repo.location(), recipe.name));
  std::error_code ec;
  fs::create_directories(tree.dir(), ec);
  fs::create_directories(entry.parent_path(), ec);
  if (ec) return common::Error{"cannot create " + entry.parent_path().string() + ": " + ec.message()};
  // Serializes builds in one work tree across processes.
  auto lock = common::FileLock::acquire(tree.dir() / "build.lock", common::LockMode::Exclusive, [&] {
    if (options.on_wait)
      options.on_wait("waiting for another build in " + tree.dir().string() +
                      " (a driftwatch build or worker of this data directory) to finish");
  });
  if (!lock) return common::Error{"work tree " + tree.dir().string() + " is not writable: " + lock.error().message};
  // Before the checkout rewrites the sources under it: a ninja a SIGKILLed
  // run left behind would build the new check-in from half-old sources.
  builder::end_leftover_step(builder::step_file_of(tree.build_dir()), {tree.source_dir(), tree.build_dir()});
  if (!options.rebuild)
    if (auto cached = builder::read_cached(entry, &damaged))  // another process built it while we waited
      return from_cache(std::move(out), recipe, *cached);
  auto checkout = tree.checkout(repo, commit.sha);
  if (!checkout) return checkout.error();
  out.checkout = *checkout;
  out.result = builder::run_build(recipe, {tree.source_dir(), tree.build_dir(), options.data_dir, entry, options.jobs});
  if (!damaged.empty()) out.result.rebuilt_because = "the cached build was damaged: " + damaged;
  // A build that needed a submodule fails on its missing files: say why.
  if (out.result.outcome != builder::Outcome::Ok && !checkout->submodules.empty()) {
    std::string paths;
    for (std::size_t i = 0; i < checkout->submodules.size() && i < 3; ++i)
      paths += (i ? ", " : "") + checkout->submodules[i];
    if (checkout->submodules.size() > 3) paths += ", …";
    out.result.message += " (its submodules are not checked out: " + paths + ")";
  }
  return out;
}

}  // namespace tracker
