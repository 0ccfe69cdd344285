#include "cli/context.h"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>

#include "common/data_dir.h"
#include "db/embedded.h"
#include "db/store.h"

namespace cli {

std::filesystem::path Context::data_dir() const { return common::resolve_data_dir(data_dir_flag); }

bool Context::embedded() const { return !dsn || dsn->empty(); }

db::Target Context::target() const {
  if (!embedded()) return db::parse_dsn(*dsn).take();
  return db::EmbeddedCluster(data_dir() / "postgres").target();
}

void require_one_subcommand(CLI::App& group) {
  group.allow_extras();
  group.callback([&group] {
    if (!group.get_subcommands().empty()) return;
    std::string names;
    for (const auto* s : group.get_subcommands({})) names += (names.empty() ? "" : "|") + s->get_name();
    auto extra = group.remaining();
    if (!extra.empty())
      throw common::Fatal("unknown " + group.get_name() + " subcommand '" + extra.front() + "' (expected " + names + ")");
    throw common::Fatal(group.get_name() + " needs a subcommand: " + names);
  });
}

db::Database Context::database(bool migrate) const {
  if (embedded()) db::EmbeddedCluster(data_dir() / "postgres").start();
  auto database = db::Database::connect(target()).take();
  if (migrate) {
    database.migrate();
  } else {
    database.require_current_schema();
  }
  // Evaluations whose process died are interrupted, not running, for every command.
  db::record_interrupted_evaluations(database);
  return database;
}

void require_shipped_policy_if_default(const std::string& policy) {
  if (policy == DRIFTWATCH_SHIPPED_POLICY && !std::filesystem::is_regular_file(policy))
    throw common::Fatal("the shipped policy is not at " + policy +
                        " (this driftwatch was built from a source tree that has moved or gone): give --policy FILE");
}

}  // namespace cli
