#include "tests/support/test_db.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <stdexcept>

#include "db/embedded.h"

namespace testing {

std::string test_cluster_dir() {
  const char* dir = std::getenv("DRIFTWATCH_TEST_PG");
  if (!dir || !*dir)
    throw std::runtime_error("DRIFTWATCH_TEST_PG is not set: run the tests through ctest, whose fixture starts PostgreSQL");
  return dir;
}

db::Target test_server() { return db::EmbeddedCluster(std::string(test_cluster_dir()) + "/postgres").target("postgres"); }

db::Database fresh_database(bool migrate, std::string* name_out) {
  static std::atomic<int> counter{0};
  std::string name = "t_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
  auto server = test_server();
  db::drop_database(server, name);
  db::create_database(server, name);
  auto target = db::EmbeddedCluster(test_cluster_dir() + "/postgres").target(name);
  auto database = db::Database::connect(target).take();
  if (migrate) database.migrate();
  if (name_out) *name_out = name;
  return database;
}

}  // namespace testing
