#pragma once
// `driftwatch sample-history DIR`: the sample compiler's scripted year of
// check-ins, written as a real git repository with libgit2.
#include <cstdint>
#include <filesystem>
#include <optional>

#include "common/result.h"

namespace tracker {

struct SampleHistoryOptions {
  int weeks = 52;             ///< check-ins of weeks [0, weeks)
  std::int64_t start = 0;     ///< time of week 0 (seconds since the epoch, UTC)
  /// A history script of the user's; none: the one shipped in the binary.
  std::optional<std::filesystem::path> history_file;
};

struct SampleHistoryReport {
  int commits = 0;  ///< all commits, side branch included
  int main_commits = 0;
  std::string head;
};

/// The default start: Monday 2025-12-01, so the year ends in late November 2026
/// and the shipped history's commit ids are the same on every machine.
std::int64_t default_sample_start();

/// Writes the repository at `dir`, which must not exist or be empty. Built in
/// a scratch directory and renamed into place: never half-written.
common::Result<SampleHistoryReport> write_sample_history(const std::filesystem::path& dir,
                                                         const SampleHistoryOptions& options);

}  // namespace tracker
