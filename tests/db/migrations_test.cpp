#include <doctest/doctest.h>

#include <thread>

#include "common/process.h"
#include "db/database.h"
#include "db/store.h"
#include "tests/support/test_db.h"

TEST_CASE("migrate brings an empty database to the latest schema, once") {
  auto database = testing::fresh_database(/*migrate=*/false);
  CHECK(database.schema_version() == 0);
  auto first = database.migrate();
  CHECK(first.from_version == 0);
  CHECK(first.to_version == db::latest_schema_version());
  CHECK(first.applied.size() == static_cast<size_t>(db::latest_schema_version()));
  CHECK(first.applied.front() == "0001_initial");

  auto second = database.migrate();
  CHECK(second.applied.empty());
  CHECK(second.from_version == second.to_version);
  CHECK_NOTHROW(database.require_current_schema());
}

TEST_CASE("concurrent migrations on two connections at once apply each step once") {
  std::string name;
  auto a = testing::fresh_database(false, &name);
  auto target = db::parse_dsn("host=" + testing::test_cluster_dir() + "/postgres user=postgres dbname=" + name).take();
  auto b = db::Database::connect(target).take();
  db::MigrationReport ra, rb;
  std::thread t1([&] { ra = a.migrate(); });
  std::thread t2([&] { rb = b.migrate(); });
  t1.join();
  t2.join();
  CHECK(ra.applied.size() + rb.applied.size() == static_cast<size_t>(db::latest_schema_version()));
  CHECK(a.schema_version() == db::latest_schema_version());
}

TEST_CASE("an up-to-date database needs no privilege but reading: a read-only role opens it") {
  std::string name;
  auto owner = testing::fresh_database(true, &name);
  auto host = testing::test_cluster_dir() + "/postgres";
  auto role = "reader_" + name;  // roles are the cluster's: one per test database
  common::ProcessSpec grant;
  grant.argv = {"psql", "-X", "-v", "ON_ERROR_STOP=1", "-h", host, "-U", "postgres", "-d", name, "-c",
                "CREATE ROLE " + role + " LOGIN; REVOKE CREATE ON SCHEMA public FROM PUBLIC; "
                "GRANT SELECT ON ALL TABLES IN SCHEMA public TO " + role};
  auto granted = common::run_process(grant).take();
  REQUIRE_MESSAGE(granted.ok(), granted.output);
  // Peer authentication lets only postgres in over the socket: the session takes the role at its start.
  auto reader = db::Database::connect(
                    db::parse_dsn("host=" + host + " user=postgres dbname=" + name + " options='-c role=" + role + "'")
                        .take())
                    .take();
  auto report = reader.migrate();  // what every command does on opening
  CHECK(report.applied.empty());
  CHECK(report.to_version == db::latest_schema_version());
  CHECK(db::record_interrupted_evaluations(reader) == 0);  // as every command does next: no UPDATE privilege
  // A session that may only read (as on a hot standby) neither fails nor writes.
  auto standby = db::Database::connect(db::parse_dsn("host=" + host + " user=postgres dbname=" + name +
                                                     " options='-c default_transaction_read_only=on'")
                                           .take())
                     .take();
  CHECK(db::record_interrupted_evaluations(standby) == 0);
  // A newer driftwatch migrated the database: the reader is told to upgrade,
  // not that it may not create a table.
  owner.migrate();
  common::ProcessSpec newer;
  newer.argv = {"psql", "-X", "-v", "ON_ERROR_STOP=1", "-h", host, "-U", "postgres", "-d", name, "-c",
                "INSERT INTO schema_migrations (version, name) VALUES (99, 'from the future')"};
  REQUIRE(common::run_process(newer).take().ok());
  try {
    reader.migrate();
    FAIL("a newer schema was opened");
  } catch (const std::exception& e) {
    CHECK(std::string(e.what()).find("upgrade driftwatch") != std::string::npos);
  }
}
