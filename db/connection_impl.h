#pragma once
// Internal to db/: the pqxx connection behind db::Database, and the guard
// that turns libpqxx failures into one-line messages.
#define PQXX_HAVE_OPTIONAL 1
#include <pqxx/pqxx>

#include "common/text.h"
#include "db/database.h"

namespace db {

struct Database::Impl {
  Target target;
  pqxx::connection conn;
  /// The server process of this session, read at connect: still known once
  /// the connection is lost (what retake_project_lock ends).
  int backend_pid = 0;
  Impl(Target t, const std::string& conninfo) : target(std::move(t)), conn(conninfo), backend_pid(conn.backendpid()) {}

  /// Runs f; a lost connection or SQL error becomes common::Fatal naming the
  /// database, so callers far from db/ print one clear line.
  template <class F>
  auto guarded(const char* what, F&& f) -> decltype(f()) {
    try {
      return f();
    } catch (const pqxx::broken_connection& e) {
      throw ConnectionLost("lost the connection to PostgreSQL (" + target.display + ") while " + what + ": " +
                           lost_why(e.what()));
    } catch (const pqxx::in_doubt_error& e) {
      // The connection went during COMMIT: whether the write landed is not
      // known, but the connection is gone either way (callers reconnect).
      throw ConnectionLost("lost the connection to PostgreSQL (" + target.display + ") while " + what +
                           ", during its commit (it may or may not have been written): " + first_line(e.what()));
    } catch (const pqxx::sql_error& e) {
      throw common::Fatal(std::string("database error while ") + what + ": " + first_line(e.what()));
    } catch (const pqxx::failure& e) {
      // What libpqxx 6 throws for a COPY into a closed connection, a
      // deadlock or a serialization failure: not sql_error's subclasses.
      if (!conn.is_open())
        throw ConnectionLost("lost the connection to PostgreSQL (" + target.display + ") while " + what + ": " +
                             first_line(e.what()));
      throw common::Fatal(std::string("database error while ") + what + ": " + first_line(e.what()));
    }
  }

  /// libpqxx 6 says a connection the server closed cannot tell its client
  /// encoding, when it escapes or quotes for the next statement: a riddle
  /// in a line that tells a person why a sweep stopped.
  static std::string lost_why(const std::string& s) {
    auto line = first_line(s);
    return line.starts_with("Could not obtain client encoding") ? "the connection is closed (the server went away)"
                                                                : line;
  }

  static std::string first_line(const std::string& s) {
    auto lines = common::split(s, '\n');
    for (const auto& l : lines) {
      auto t = common::trim(l);
      if (!t.empty()) return t;
    }
    return s;
  }
};

struct JobFinish;
namespace detail {
/// Marks a job finished inside the transaction that stores its results.
void finish_job_in(pqxx::work& tx, const JobFinish& finish, const std::string& state, const std::string& error);
/// Throws LeaseLost unless the job is still `finish.owner`'s, and keeps it so
/// until the transaction ends: a worker whose lease was taken writes nothing.
void check_lease_in(pqxx::work& tx, const JobFinish& finish);
}  // namespace detail

}  // namespace db
