#include "tests/support/sweep_project.h"

#include "tests/support/test_db.h"

namespace testing {

std::string second_database(std::string* name) {
  testing::fresh_database(true, name);
  return "host=" + testing::test_cluster_dir() + "/postgres user=postgres dbname=" + *name;
}

}  // namespace testing
