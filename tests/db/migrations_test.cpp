#include <doctest/doctest.h>

#include <thread>

#include "db/database.h"
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

TEST_CASE("concurrent migrations from two processes' connections apply each step once") {
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
