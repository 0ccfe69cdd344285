#pragma once
// Numbered schema migrations, embedded from db/migrations/NNNN_name.sql.
#include <string_view>
#include <vector>

namespace db {

struct Migration {
  int version;
  std::string_view name;  ///< "0001_initial"
  std::string_view sql;
};

/// All migrations in version order; versions are 1, 2, 3, … without gaps.
const std::vector<Migration>& migrations();

}  // namespace db
