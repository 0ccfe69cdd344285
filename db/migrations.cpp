#include "db/migrations.h"

#include <string>
#include <utility>

#include "common/result.h"

namespace db {
namespace embedded {
const std::vector<std::pair<std::string_view, std::string_view>>& migration_files();
}

const std::vector<Migration>& migrations() {
  static const std::vector<Migration> all = [] {
    std::vector<Migration> out;
    for (const auto& [path, sql] : embedded::migration_files()) {
      auto name = path.substr(0, path.rfind(".sql"));
      int version = std::stoi(std::string(name.substr(0, 4)));
      // CMake globs the files sorted; a gap means a file went missing.
      if (version != static_cast<int>(out.size()) + 1)
        throw common::Fatal("migration " + std::string(name) + " is out of sequence");
      out.push_back({version, name, sql});
    }
    return out;
  }();
  return all;
}

}  // namespace db
