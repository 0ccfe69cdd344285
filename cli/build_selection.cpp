#include "cli/build_selection.h"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

namespace cli {

void BuildSelector::attach(CLI::App& sub) {
  sub.add_option("--build", build,
                 "the compiler: a check-in of --repo (built if needed), a build cache entry, or a directory holding "
                 "the recipe's artifacts (a toolchain's install prefix)")
      ->required();
  sub.add_option("--repo", repo, "the compiler's git repository (with a check-in for --build)");
  sub.add_option("--recipe", recipe,
                 "recipe file or shipped name (default: sample-compiler; a cache entry compiles as the recipe that "
                 "built it, and one that compiles otherwise is refused)");
  sub.add_option("-j,--jobs", jobs, "parallel jobs (default: one per core)")->check(CLI::Range(0, 1024));
}

sweep::SelectedBuild select_build(const Context& ctx, const BuildSelector& s, db::Database* database) {
  auto log = [&ctx](const std::string& line) {
    if (!ctx.quiet) fmt::print(stderr, "{}\n", line);
  };
  return sweep::select_build(ctx.data_dir(), {s.build, s.repo, s.recipe, sweep::jobs_or_cores(s.jobs)}, database, log);
}

}  // namespace cli
