#pragma once
// The 8-week test history with more check-ins appended, as a history file
// `driftwatch sample-history --history` replays: a scenario's own week.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace testing {

/// tests/data/history-8w.toml plus `checkins` (its TOML), written to `file`
/// with the sample compiler's tree named by an absolute path.
inline std::string history_8w_with(const std::filesystem::path& file, const std::string& checkins) {
  std::ifstream in(std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/history-8w.toml");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  std::string tree = "tree = \"../../samples/compiler\"";
  REQUIRE(text.find(tree) != std::string::npos);
  text.replace(text.find(tree), tree.size(), "tree = \"" + std::string(DRIFTWATCH_SOURCE_DIR) + "/samples/compiler\"");
  std::ofstream(file) << text << checkins;
  return file.string();
}

}  // namespace testing
