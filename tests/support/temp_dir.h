#pragma once
// A directory for one test, removed afterwards. Mode 0755 so the embedded
// server's `postgres` user can walk into it when tests run as root.
#include <filesystem>
#include <string>
#include <vector>

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
/// The same, but as `nobody` when we are root (through setpriv), since root's
/// rights bypass what the test checks (file modes); as ourselves otherwise.
common::ProcessResult run_driftwatch_unprivileged(const std::vector<std::string>& args);

/// Runs a program (argv[0] looked up on PATH) and fails the test, with what
/// it printed, unless it exits 0.
void run_ok(const std::vector<std::string>& argv);

/// Printed by a test that cannot run here; ctest's SKIP_REGULAR_EXPRESSION
/// turns it into a visible "Skipped" (doctest's skip() hides the test from ctest).
inline constexpr const char* kSkipMarker = "DRIFTWATCH-TEST-SKIPPED";
/// Prints kSkipMarker with the reason; the test then returns.
void skip_test(const std::string& reason);

}  // namespace testing
