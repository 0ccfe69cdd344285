#pragma once
// Keeping the artifact cache (<data>/cache) within bounds: each entry holds a
// check-in's built compiler (hundreds of MB for llvm-project), and a year of
// samples and bisection steps adds up. Removing an entry only means a later
// build of that check-in runs again; an entry in use (a pinned generation,
// a build in progress) is never removed.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace builder {

/// One cache entry: `<data>/cache/<recipe>-<hash>/<sha>` and what it holds.
struct CacheEntry {
  std::filesystem::path entry;
  std::uintmax_t bytes = 0;       ///< its generations' files
  /// Seconds since the epoch: when its current generation's build finished
  /// (as its result.json says; else the generation's mtime). Not whole
  /// seconds: two builds finished in one second must still be told apart.
  double built_at = 0;
};

struct PruneLimits {
  std::optional<std::uintmax_t> max_bytes;  ///< keep the newest entries that fit
  std::optional<std::int64_t> max_age;      ///< seconds: remove entries built longer ago
};

/// Which entries to remove (indices into `entries`): every one older than
/// max_age, then the oldest ones until the rest fit in max_bytes. Pure.
std::vector<std::size_t> entries_to_prune(const std::vector<CacheEntry>& entries, const PruneLimits& limits,
                                          std::int64_t now);

/// The largest size parse_size takes: 1048576T (2^60 bytes).
inline constexpr std::uintmax_t kMaxSize = std::uintmax_t{1} << 60;
/// "50G", "500M", "1T", "123456" (bytes), at most kMaxSize; an error names what is wrong.
common::Result<std::uintmax_t> parse_size(const std::string& text);

/// Every entry of the cache under `data_dir`, oldest first.
std::vector<CacheEntry> list_cache(const std::filesystem::path& data_dir);

struct PruneOutcome {
  int removed = 0, in_use = 0, kept = 0;
  std::uintmax_t freed = 0, kept_bytes = 0;
  /// One line each for the chosen entries whose removal failed (counted in
  /// `kept`: their files are still there).
  std::vector<std::string> failures;
  /// Generations no entry names: builds that timed out, failed for the
  /// machine or were killed, kept for their log until the check-in is built
  /// again. Removed (counted) whatever the limits, unless a build holds one
  /// or it changed within a day (another machine's build on NFS, whose lock
  /// is not seen here).
  int unfinished = 0;
  std::uintmax_t unfinished_bytes = 0;
  /// The entries removed (or, in a dry run, that would be), oldest first:
  /// a dry run is to be read before the real one.
  std::vector<CacheEntry> removed_entries;
};

/// Removes what entries_to_prune chose, skipping entries in use, and the
/// unfinished builds no build holds; with `dry_run`, only counts. An error
/// when `<data_dir>/cache` cannot be read: a cron job pointed at another data
/// directory than the builds' must not report "removed 0" for ever.
common::Result<PruneOutcome> prune_cache(const std::filesystem::path& data_dir, const PruneLimits& limits,
                                         bool dry_run);

}  // namespace builder
