#pragma once
// `--config FILE`: the project file every project command reads (else
// ./driftwatch.toml). Its database and data directory apply unless --db,
// $DRIFTWATCH_DB or --data-dir say otherwise.
#include <optional>
#include <string>

#include "cli/context.h"
#include "sweep/project_file.h"

namespace CLI {
class App;
}

namespace cli {

struct ProjectArgs {
  std::string config;
  void attach(CLI::App& sub);
  /// Reads the project file and applies its database settings to `ctx`.
  sweep::ProjectFile load(Context& ctx) const;
  /// For commands that also work without a project (`jobs`): load() when
  /// --config is given, or ./driftwatch.toml exists and no database is
  /// named (--db, $DRIFTWATCH_DB); else nothing. Run in a project's
  /// directory, they read its database, not the embedded one.
  std::optional<sweep::ProjectFile> load_if_any(Context& ctx) const;
};

}  // namespace cli
