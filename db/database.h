#pragma once
// The connection to driftwatch's PostgreSQL database and its schema. libpqxx
// stays behind this header: nothing outside db/ sees SQL or pqxx.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"

namespace db {

/// A database to connect to. `display` is safe to print: no password.
struct Target {
  std::string conninfo;
  std::string display;
  /// Set for the embedded cluster only: starts its server again, as any
  /// command would, when a long run finds it stopped (`db stop`, a crash).
  std::function<void()> start_server;
};

/// The server went away (restart, network): a caller may reconnect and retry.
class ConnectionLost : public common::Fatal {
 public:
  using common::Fatal::Fatal;
};

/// Parses a DSN (URI `postgresql://…` or `key=value …`). The error names what
/// is wrong and never echoes a password.
common::Result<Target> parse_dsn(const std::string& dsn);

struct MigrationReport {
  int from_version = 0;
  int to_version = 0;
  std::vector<std::string> applied;  ///< "0001_initial", …
};

class Database {
 public:
  /// Connects; the error names the host and libpq's reason in one line.
  static common::Result<Database> connect(const Target& target);
  Database(Database&&) noexcept;
  Database& operator=(Database&&) noexcept;
  ~Database();

  /// Connects, trying again (waits growing to 8 s) while the server is away
  /// for at most `seconds`: a restart or a failover in the middle of a run.
  /// The embedded server is started again rather than waited for.
  static common::Result<Database> connect_within(const Target& target, double seconds);
  const std::string& display() const;
  const Target& target() const;
  /// 0 for an empty database.
  int schema_version();
  /// Applies pending migrations, one transaction each, serialized across
  /// processes. Refuses a database newer than this binary.
  MigrationReport migrate();
  /// Throws Fatal unless the schema is exactly the one this binary knows
  /// (after migrate(), or for read-only commands).
  void require_current_schema();

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  explicit Database(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// The newest schema version this binary knows.
int latest_schema_version();

}  // namespace db

namespace db {

/// Creates database `name` on the server of `server` if it does not exist.
/// `name` must be a plain identifier ([a-z0-9_]).
void create_database(const Target& server, const std::string& name);
/// Drops database `name` if it exists.
void drop_database(const Target& server, const std::string& name);

}  // namespace db
