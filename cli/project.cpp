#include "cli/project.h"

#include <CLI/CLI.hpp>
#include <filesystem>

namespace cli {

void ProjectArgs::attach(CLI::App& sub) {
  sub.add_option("--config", config, "the project file (default: ./driftwatch.toml)");
}

sweep::ProjectFile ProjectArgs::load(Context& ctx) const {
  auto project = sweep::load_project_file(config.empty() ? "driftwatch.toml" : config).take();
  if (ctx.embedded() && !project.dsn.empty()) ctx.dsn = project.dsn;
  if (!ctx.data_dir_flag && !project.data_dir.empty()) ctx.data_dir_flag = project.data_dir;
  return project;
}

std::optional<sweep::ProjectFile> ProjectArgs::load_if_any(Context& ctx) const {
  std::error_code ec;
  // A database named on the command line or in the environment is the one
  // meant: a file beside it (perhaps broken) is not read unless given.
  if (config.empty() && (!ctx.embedded() || !std::filesystem::exists("driftwatch.toml", ec))) return std::nullopt;
  return load(ctx);
}

}  // namespace cli
