#include "db/database.h"

#include <libpq-fe.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>

#include "db/connection_impl.h"
#include "db/migrations.h"

namespace db {
namespace {

// Key 0x647269667477 = "driftw": serializes migrations across processes.
constexpr long long kMigrationLock = 0x647269667477LL;

std::string quote_value(const std::string& v) {
  std::string out = "'";
  for (char c : v) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

/// The words of a DSN that may be (part of) its password. The DSN failed to
/// parse, so this guesses generously: in `key=value` form the value after
/// `password=` and any following words without '=' ("password=a b" meant
/// "a b"); in a URI the text between the user's ':' and '@', and the
/// `password` query value.
std::vector<std::string> password_words(const std::string& dsn) {
  std::vector<std::string> out;
  auto add_words = [&](const std::string& text) {
    for (auto& w : common::split(text, ' '))
      if (!common::trim(w).empty()) out.push_back(common::trim(w));
  };
  bool uri = dsn.starts_with("postgresql://") || dsn.starts_with("postgres://");
  if (uri) {
    auto rest = dsn.substr(dsn.find("://") + 3);
    auto at = rest.rfind('@', rest.find_first_of("/?"));
    auto colon = rest.find(':');
    if (at != std::string::npos && colon < at) add_words(rest.substr(colon + 1, at - colon - 1));
  }
  for (size_t pos = dsn.find("password"); pos != std::string::npos; pos = dsn.find("password", pos + 1)) {
    size_t i = dsn.find_first_not_of(' ', pos + 8);
    if (i == std::string::npos || dsn[i] != '=') continue;
    size_t v = dsn.find_first_not_of(' ', i + 1);
    if (v == std::string::npos) continue;
    auto value = dsn.substr(v);
    if (uri) value = value.substr(0, value.find('&'));
    bool first = true;
    for (auto& w : common::split(value, ' ')) {
      if (w.empty()) continue;
      if (!first && w.find('=') != std::string::npos) break;
      add_words(w);
      first = false;
    }
  }
  return out;
}

/// libpq's parse errors quote the offending text ("missing \"=\" after
/// \"b\"", a whole URI): hide every quoted piece that shares text with the
/// password, so the message keeps its reason and never the secret.
std::string without_password(const std::string& message, const std::string& dsn) {
  auto secrets = password_words(dsn);
  std::string out;
  size_t i = 0;
  while (i < message.size()) {
    auto open = message.find('"', i);
    auto close = open == std::string::npos ? std::string::npos : message.find('"', open + 1);
    if (close == std::string::npos) {
      out += message.substr(i);
      break;
    }
    auto quoted = message.substr(open + 1, close - open - 1);
    bool secret = false;
    for (const auto& w : secrets)
      secret = secret || quoted.find(w) != std::string::npos || w.find(quoted) != std::string::npos;
    out += message.substr(i, open - i) + (secret && !quoted.empty() ? "\"(hidden)\"" : "\"" + quoted + "\"");
    i = close + 1;
  }
  return out;
}

}  // namespace

common::Result<Target> parse_dsn(const std::string& dsn) {
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(dsn.c_str(), &err);
  if (!opts) {
    std::string msg = err ? common::trim(err) : "out of memory";
    if (err) PQfreemem(err);
    return common::Error{"invalid database DSN: " + without_password(msg, dsn)};
  }
  std::map<std::string, std::string> kv;
  for (auto* o = opts; o->keyword; ++o)
    if (o->val && *o->val) kv[o->keyword] = o->val;
  PQconninfoFree(opts);

  // An unreachable host must not hang a scheduled sweep for minutes.
  if (!kv.count("connect_timeout")) kv["connect_timeout"] = "10";
  // A network that silently drops a connection must fail a statement within
  // minutes, not after the kernel's two-hour keepalive: a worker's lease
  // would expire meanwhile and its job run twice. (TCP only; libpq ignores
  // these on a Unix socket.)
  for (auto [k, v] : {std::pair{"keepalives", "1"}, {"keepalives_idle", "60"}, {"keepalives_interval", "10"},
                      {"keepalives_count", "6"}, {"tcp_user_timeout", "120000"}})
    if (!kv.count(k)) kv[k] = v;
  if (!kv.count("application_name")) kv["application_name"] = "driftwatch";

  Target t;
  for (const auto& [k, v] : kv) t.conninfo += k + "=" + quote_value(v) + " ";
  auto get = [&](const char* k, const char* dflt) { return kv.count(k) ? kv[k] : std::string(dflt); };
  t.display = "host=" + get("host", kv.count("hostaddr") ? kv["hostaddr"].c_str() : "localhost") +
              " port=" + get("port", "5432");
  if (auto name = get("dbname", get("user", "").c_str()); !name.empty()) t.display += " dbname=" + name;
  if (kv.count("user")) t.display += " user=" + kv["user"];
  return t;
}

Database::Database(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Database::Database(Database&&) noexcept = default;
Database& Database::operator=(Database&&) noexcept = default;
Database::~Database() = default;

common::Result<Database> Database::connect(const Target& target) {
  try {
    return Database(std::make_unique<Impl>(target, target.conninfo));
  } catch (const std::exception& e) {
    return common::Error{"cannot connect to PostgreSQL at " + target.display + ": " +
                         Impl::first_line(e.what())};
  }
}

common::Result<Database> Database::connect_within(const Target& target, double seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  double wait = 0.5;
  for (;;) {
    auto db = connect(target);
    if (!db && target.start_server) {
      try {
        target.start_server();
        db = connect(target);
      } catch (const std::exception& e) {  // the connection's reason first
        db = common::Error{db.error().message + "; starting it again: " + Impl::first_line(e.what())};
      }
    }
    if (db) return db;
    if (std::chrono::steady_clock::now() > deadline)
      return common::Error{"PostgreSQL at " + target.display + " did not come back within " +
                           common::format_seconds(seconds) + ": " + db.error().message};
    std::this_thread::sleep_for(std::chrono::duration<double>(wait));
    wait = std::min(wait * 2, 8.0);
  }
}

const std::string& Database::display() const { return impl_->target.display; }
const Target& Database::target() const { return impl_->target; }

int latest_schema_version() { return migrations().back().version; }

int Database::schema_version() {
  return impl_->guarded("reading the schema version", [&] {
    pqxx::read_transaction tx(impl_->conn);
    auto exists = tx.exec1("SELECT to_regclass('public.schema_migrations') IS NOT NULL")[0].as<bool>();
    if (!exists) return 0;
    return tx.exec1("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")[0].as<int>();
  });
}

void Database::require_current_schema() {
  int have = schema_version();
  int want = latest_schema_version();
  if (have > want)
    throw common::Fatal("the database at " + display() + " has schema version " + std::to_string(have) +
                        ", newer than this driftwatch knows (" + std::to_string(want) +
                        "); upgrade driftwatch");
  if (have < want)
    throw common::Fatal("the database at " + display() + " has schema version " + std::to_string(have) +
                        ", this driftwatch needs " + std::to_string(want) + "; run `driftwatch db migrate`");
}

MigrationReport Database::migrate() {
  // Up to date (every command but the first after an upgrade): read only, so
  // a role that may only read (a report's) can run driftwatch too.
  if (int have = schema_version(); have == latest_schema_version()) {
    MigrationReport current;
    current.from_version = current.to_version = have;
    return current;
  } else if (have > latest_schema_version()) {
    require_current_schema();  // throws "… upgrade driftwatch" before anything needs a privilege
  }
  return impl_->guarded("migrating the schema", [&] {
    auto& c = impl_->conn;
    {
      pqxx::nontransaction nt(c);
      nt.exec_params("SELECT pg_advisory_lock($1)", kMigrationLock);
    }
    struct Unlock {
      pqxx::connection& c;
      ~Unlock() {
        try {
          pqxx::nontransaction nt(c);
          nt.exec_params("SELECT pg_advisory_unlock($1)", kMigrationLock);
        } catch (...) {
        }
      }
    } unlock{c};

    {
      pqxx::work tx(c);
      tx.exec(
          "CREATE TABLE IF NOT EXISTS schema_migrations ("
          " version integer PRIMARY KEY, name text NOT NULL,"
          " applied_at timestamptz NOT NULL DEFAULT now())");
      tx.commit();
    }
    MigrationReport report;
    report.from_version = schema_version();
    if (report.from_version > latest_schema_version()) require_current_schema();  // throws
    for (const auto& m : migrations()) {
      if (m.version <= report.from_version) continue;
      pqxx::work tx(c);
      tx.exec(std::string(m.sql));
      tx.exec_params("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.version,
                     std::string(m.name));
      tx.commit();
      report.applied.push_back(std::string(m.name));
    }
    report.to_version = schema_version();
    return report;
  });
}

}  // namespace db

namespace db {
namespace {

void require_identifier(const std::string& name) {
  bool ok = !name.empty() && name.size() < 64;
  for (char c : name) ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
  if (!ok) throw common::Fatal("invalid database name '" + name + "' (use lower-case letters, digits and _)");
}

}  // namespace

void create_database(const Target& server, const std::string& name) {
  require_identifier(name);
  auto database = Database::connect(server).take();
  database.impl().guarded("creating a database", [&] {
    pqxx::nontransaction nt(database.impl().conn);
    if (nt.exec_params("SELECT 1 FROM pg_database WHERE datname = $1", name).empty())
      nt.exec("CREATE DATABASE " + nt.quote_name(name));  // DDL takes no parameters
  });
}

void drop_database(const Target& server, const std::string& name) {
  require_identifier(name);
  auto database = Database::connect(server).take();
  database.impl().guarded("dropping a database", [&] {
    pqxx::nontransaction nt(database.impl().conn);
    nt.exec("DROP DATABASE IF EXISTS " + nt.quote_name(name) + " WITH (FORCE)");
  });
}

}  // namespace db
