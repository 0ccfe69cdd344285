#pragma once
// A directory for one test, removed afterwards. Mode 0755 so the embedded
// server's `postgres` user can walk into it when tests run as root.
#include <filesystem>
#include <string>

#include "common/process.h"

namespace testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& rel) const { return path_ / rel; }

 private:
  std::filesystem::path path_;
};

/// Runs the driftwatch binary with `args`, capturing stdout+stderr.
common::ProcessResult run_driftwatch(const std::vector<std::string>& args,
                                     const std::vector<std::pair<std::string, std::string>>& env = {});

}  // namespace testing
