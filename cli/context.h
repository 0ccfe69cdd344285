#pragma once
// What every subcommand shares: global options, the data directory and the
// database (embedded unless a DSN is given).
#include <filesystem>
#include <optional>
#include <string>

#include "db/database.h"

namespace CLI {
class App;
}

namespace cli {

struct Context {
  std::optional<std::string> dsn;  ///< --db, else $DRIFTWATCH_DB
  std::optional<std::filesystem::path> data_dir_flag;
  bool quiet = false;
  int exit_code = 0;  ///< set by a command whose result is negative (a failed build: 1)

  /// The resolved data directory (not created).
  std::filesystem::path data_dir() const;
  /// True when no DSN was given and the embedded cluster is used.
  bool embedded() const;
  /// Connects (starting the embedded cluster if needed) and brings the schema
  /// up to date. Throws common::Fatal with one line on failure.
  db::Database database(bool migrate = true) const;
  /// The database target without connecting.
  db::Target target() const;
};

/// Throws common::Fatal when `policy` is the shipped policy (the source tree
/// this binary was built from holds it) and that file is gone: the tree
/// moved, or the binary was copied elsewhere. Other paths are the caller's.
void require_shipped_policy_if_default(const std::string& policy);

/// For a group such as `db`: exactly one of its subcommands must follow, and
/// a wrong word is named ("unknown db subcommand 'x'").
void require_one_subcommand(CLI::App& group);

/// A subcommand: its name, one line of help, and how it registers itself.
struct Command {
  const char* name;
  const char* help;
  void (*attach)(CLI::App& sub, Context& ctx);
};

}  // namespace cli
