#pragma once
// `--build REV|DIR [--repo R] [--recipe X]`: the compiler build a command
// works with (see sweep/compiler_build.h).
#include <string>

#include "cli/context.h"
#include "sweep/compiler_build.h"

namespace CLI {
class App;
}

namespace cli {

struct BuildSelector {
  std::string build;  ///< a git rev of --repo, a cache entry or a toolchain directory
  std::string repo;
  std::string recipe;  ///< "": not given (see sweep::BuildRequest)
  int jobs = 0;
  void attach(CLI::App& sub);
};

/// Builds or finds the selected compiler; records it when `database` is given.
sweep::SelectedBuild select_build(const Context& ctx, const BuildSelector& selector, db::Database* database);

}  // namespace cli
