// driftwatch build
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <thread>

#include "cli/commands.h"
#include "sweep/recording.h"
#include "common/data_dir.h"
#include "common/text.h"
#include "tracker/sampling.h"

namespace cli {
namespace {

struct BuildArgs {
  std::string repo, recipe, commit;
  int jobs = 0;
  bool rebuild = false, dry_run = false;
};

void print_dry_run(const builder::Recipe& recipe, const tracker::WorkTree& tree, const std::filesystem::path& data,
                   int jobs, const std::string& sha) {
  auto r = builder::render(recipe, {tree.source_dir(), tree.build_dir(), data, jobs}).take();
  // Two hashes: the recipe's (its series in the database) and its build's
  // alone (the cache's key: a changed [compile] rebuilds nothing).
  fmt::print("recipe {} ({}; its build's hash {})\n", recipe.name, recipe.content_hash.substr(0, 12),
             recipe.build_hash.substr(0, 12));
  fmt::print("cached in: {}\n", builder::cache_entry_dir(data, recipe, sha).string());
  for (const auto& [k, v] : r.env) fmt::print("env {}={}\n", k, v);
  if (!r.configure.empty())
    fmt::print("configure{}: {}\n",
               r.configure_marker.empty() ? "" : " (unless " + r.configure_marker.string() + " exists)", r.configure);
  fmt::print("build: {}\n", r.build);
  for (const auto& [k, v] : r.artifacts) fmt::print("artifact {} = {}\n", k, v.string());
  fmt::print("timeout: {}\n", common::format_seconds(recipe.timeout.count()));
}

void run(Context& ctx, const BuildArgs& a) {
  auto recipe = builder::load_recipe(a.recipe).take();
  auto repo = tracker::GitRepo::open(a.repo).take();
  auto commit = repo.commit(a.commit).take();
  auto data = ctx.data_dir();
  int jobs = a.jobs > 0 ? a.jobs : recipe.jobs > 0 ? recipe.jobs : static_cast<int>(std::thread::hardware_concurrency());
  tracker::WorkTree tree(tracker::worktree_dir(data, repo.location(), recipe.name));
  if (a.dry_run) {
    print_dry_run(recipe, tree, data, jobs, commit.sha);
    return;
  }
  common::ensure_writable_dir(data, "data directory");
  auto database = ctx.database();
  if (!ctx.quiet) fmt::print(stderr, "building {} ({}) with {} …\n", commit.short_sha(), commit.subject, recipe.name);
  auto b = tracker::build_checkin(repo, recipe, commit,
                                  {data, jobs, a.rebuild, [](const std::string& why) { fmt::print(stderr, "{}\n", why); }})
               .take();
  sweep::record_build(database, repo, recipe, b);
  const auto& r = b.result;
  fmt::print("{} {}: {} in {}{}\n", commit.short_sha(), tracker::format_date(commit.time), builder::outcome_name(r.outcome),
             common::format_seconds(r.seconds), r.from_cache ? " (cached)" : "");
  if (!r.rebuilt_because.empty()) fmt::print("built again: {}\n", r.rebuilt_because);
  if (!r.from_cache)
    fmt::print("checkout: {} written, {} removed, {} unchanged{}\n", b.checkout.written, b.checkout.removed,
               b.checkout.unchanged, b.checkout.repaired ? " (repaired an interrupted checkout)" : "");
  if (r.outcome != builder::Outcome::Ok) {
    fmt::print("{}\n", r.message);
    ctx.exit_code = 1;
  }
  for (const auto& [name, path] : r.artifacts) fmt::print("{} {}\n", name, path.string());
  fmt::print("log {}\n", r.log.string());
}

}  // namespace

void attach_build(CLI::App& sub, Context& ctx) {
  auto a = std::make_shared<BuildArgs>();
  sub.add_option("--repo", a->repo, "the compiler's git repository")->required();
  sub.add_option("--recipe", a->recipe, "recipe file, or a shipped one: sample-compiler, llvm-project")->required();
  sub.add_option("--commit", a->commit, "the check-in to build (any git rev)")->required();
  sub.add_option("-j,--jobs", a->jobs, "parallel build jobs (default: the recipe's, else one per core)")->check(CLI::Range(0, 1024));
  sub.add_flag("--rebuild", a->rebuild, "build again even if the cache has a result");
  sub.add_flag("--dry-run", a->dry_run, "print the exact commands the recipe would run, build nothing");
  sub.callback([&ctx, a] { run(ctx, *a); });
}

}  // namespace cli
