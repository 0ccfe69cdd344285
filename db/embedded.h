#pragma once
// The private PostgreSQL cluster driftwatch runs when no DSN is given: created
// and started on demand under the data directory, on a unix socket only.
#include <filesystem>
#include <optional>
#include <string>

#include "common/result.h"
#include "db/database.h"

namespace db {

struct EmbeddedOptions {
  /// Throwaway clusters (tests, benchmarks) skip fsync; the user's never does.
  bool durable = true;
  int port = 5432;
};

struct EmbeddedStatus {
  bool initialized = false;
  bool running = false;
  std::optional<long> pid;
  std::string server_version;  ///< "15"
};

/// Whether a server another host may run holds the cluster's files: its
/// postmaster.pid is there, the host that last started it is another, and
/// the files are on a network filesystem (pg_ctl and PostgreSQL see only this
/// host's pids, so they would take it for stale and start a second server on
/// the same files). On a local disk a pid file is this machine's to judge,
/// whatever its host was called (a container's name changes every run).
bool started_elsewhere(bool pid_file, const std::string& started_on, const std::string& this_host, bool network_fs);

class EmbeddedCluster {
 public:
  /// `root` is `<data dir>/postgres`: data/, the socket and server.log live there.
  explicit EmbeddedCluster(std::filesystem::path root, EmbeddedOptions options = {});

  /// Checks the directory is sane (a cluster of ours, owned by the server user).
  EmbeddedStatus status() const;
  /// initdb if needed, start if not running, create the `driftwatch` database.
  /// Safe to call from several processes at once: one server results.
  /// Throws Fatal with one line when it cannot.
  void start() const;
  /// Stops a running server (fast shutdown); a stopped one is left alone.
  void stop() const;
  /// Connection target for a database on the socket (`driftwatch` by default).
  Target target(const std::string& dbname = "driftwatch") const;
  const std::filesystem::path& root() const { return root_; }

 private:
  std::filesystem::path data_dir() const { return root_ / "data"; }
  void check_sane() const;
  void init_locked() const;
  /// Socket directory 0700, peer authentication: rewrites what differs (also
  /// a cluster older versions made with `trust`); true when it changed.
  bool make_private_locked() const;
  void start_locked() const;

  std::filesystem::path root_;
  EmbeddedOptions options_;
};

}  // namespace db
