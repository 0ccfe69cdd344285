#include <doctest/doctest.h>

#include <map>
#include <thread>

#include "common/process.h"
#include "db/database.h"
#include "db/drift.h"
#include "db/migrations.h"
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

namespace {

/// Runs SQL on the test cluster's database `name` as its owner.
void run_sql(const std::string& name, const std::string& sql) {
  common::ProcessSpec spec;
  spec.argv = {"psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", testing::test_cluster_dir() + "/postgres",
               "-U", "postgres", "-d", name, "-c", sql};
  auto ran = common::run_process(spec).take();
  REQUIRE_MESSAGE(ran.ok(), ran.output);
}

}  // namespace

TEST_CASE("alerts opened before recipes were recorded get theirs, in their fingerprint as sweeps now write it") {
  std::string name;
  auto database = testing::fresh_database(false, &name);
  // The schema as the driftwatch before alerts had recipes left it.
  run_sql(name, "CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, "
                "applied_at timestamptz NOT NULL DEFAULT now())");
  for (const auto& m : db::migrations()) {
    if (m.version > 12) break;
    run_sql(name, std::string(m.sql));
    run_sql(name, "INSERT INTO schema_migrations (version, name) VALUES (" + std::to_string(m.version) + ", '" +
                      std::string(m.name) + "')");
  }
  REQUIRE(database.schema_version() == 12);
  auto repo = db::upsert_repository(database, "/srv/compiler");
  auto evaluated = db::upsert_commit(database, repo, {"c1", {}, "Ada <a@b>", 1700000000, "evaluated"});
  auto broken = db::upsert_commit(database, repo, {"c2", {"c1"}, "Ada <a@b>", 1700000100, "broken"});
  auto twice = db::upsert_commit(database, repo, {"c3", {"c2"}, "Ada <a@b>", 1700000200, "built by two recipes"});
  auto recipe = db::upsert_recipe(database, "sample", "RH", "body");
  auto other = db::upsert_recipe(database, "sample", "RH2", "other body");
  auto policy = db::upsert_policy(database, "p", "PH", "c1", "{}");
  std::vector<db::Id> benchmarks;
  auto suite = db::upsert_suite(database, "hold", "SH", "{}", {}, &benchmarks);
  db::begin_evaluation(database, db::record_build(database, {evaluated, recipe, "ok", 1, "/c/1", "/l/1", ""}), policy,
                       suite);
  // A build of another recipe at the same check-in, never evaluated by the policy: not the alert's series.
  db::record_build(database, {evaluated, other, "ok", 1, "/c/1b", "/l/1b", ""});
  db::record_build(database, {broken, recipe, "build-failed", 1, "/c/2", "/l/2", "error"});
  for (auto r : {recipe, other})
    db::begin_evaluation(database, db::record_build(database, {twice, r, "ok", 1, "/c/3", "/l/3", ""}), policy, suite);
  auto alert = [&](const std::string& kind, db::Id first_bad) {
    run_sql(name, "INSERT INTO alerts (fingerprint, policy_id, suite_id, metric, project, kind, first_bad_commit_id) "
                  "VALUES ('toy|PH|SH|" + kind + "|c" + std::to_string(first_bad) + "', " + std::to_string(policy) +
                      ", " + std::to_string(suite) + ", 'uplift', 'toy', '" + kind + "', " +
                      std::to_string(first_bad) + ")");
  };
  alert("uplift-dropped", evaluated);
  alert("build-broken", broken);
  alert("size-changed", twice);

  database.migrate();
  std::map<std::string, db::AlertView> by_kind;
  for (auto& a : db::list_alerts(database, "toy", {})) by_kind[a.kind] = a;
  REQUIRE(by_kind.size() == 3);
  CHECK(by_kind["uplift-dropped"].recipe_hash == "RH");
  CHECK(by_kind["uplift-dropped"].fingerprint == "toy|PH|SH|RH|uplift-dropped|c" + std::to_string(evaluated));
  CHECK(by_kind["build-broken"].recipe_hash == "RH");
  CHECK(by_kind["build-broken"].fingerprint == "toy|PH|SH|RH|build-broken|c" + std::to_string(broken));
  // Two recipes evaluated there: which one's it was is not known, and it is left as it was.
  CHECK(by_kind["size-changed"].recipe_hash.empty());
  CHECK(by_kind["size-changed"].fingerprint == "toy|PH|SH|size-changed|c" + std::to_string(twice));
}
