#pragma once
// A fresh, migrated database per test, on the run's throwaway cluster
// (started by the ctest fixture; see tests/CMakeLists.txt).
#include <string>

#include "db/database.h"

namespace testing {

/// The throwaway cluster's server (its `postgres` database). Fails the test
/// loudly when there is none: a test that needs PostgreSQL never skips.
db::Target test_server();
/// A new empty database on the test server; `migrate` applies the schema.
db::Database fresh_database(bool migrate = true, std::string* name = nullptr);
/// Directory of the throwaway cluster (the fixture's DIR).
std::string test_cluster_dir();

}  // namespace testing
