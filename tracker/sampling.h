#pragma once
// Which check-ins of a first-parent history to measure. Pure logic on values.
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "tracker/commit.h"

namespace tracker {

enum class PeriodUnit { Day, Week, Month };

/// "every N check-ins" or "the last check-in of each N-day/week/month period".
struct Every {
  int count = 1;
  std::optional<PeriodUnit> unit;  ///< none: every `count`-th check-in
};

/// Parses "5" (every 5th), "1d", "1w", "2w", "1m".
common::Result<Every> parse_every(std::string_view text);

struct SamplingRule {
  std::optional<Every> every;  ///< none: every check-in (unless tags_only)
  bool tags = false;           ///< take tagged check-ins (with `every`: in addition)
  /// Check-ins already measured: left out ("only what is new since the last sweep").
  std::set<std::string> skip;
  /// The history goes on past its newest check-in (a nightly `--new` sweep of
  /// a live branch): the newest is taken only where the grid or a tag takes
  /// it, never for being the newest nor as the last of a period not yet over,
  /// so nightly sweeps measure the same check-ins one sweep of the range would.
  bool open_end = false;
  /// The clock, with `open_end`: the newest check-in's period is over once
  /// it has passed (a quiet branch's last week ends too, or its newest
  /// check-in would never be measured). None: its period is taken to go on.
  std::optional<std::int64_t> now;
};

/// Indices into `history` (oldest first) of the sampled check-ins, ascending.
/// every N counts from the oldest check-in and always keeps the newest, so a
/// sweep has both its baseline and the head (unless `open_end`). Periods are
/// UTC calendar days, ISO weeks (Monday) and calendar months; each yields its
/// last check-in.
std::vector<size_t> sample(const std::vector<CommitInfo>& history, const SamplingRule& rule);

/// "2025-12-01" or "2025-12-01T10:30:00" (UTC) → seconds since the epoch.
common::Result<std::int64_t> parse_date(std::string_view text);
/// Seconds since the epoch → "2025-12-01".
std::string format_date(std::int64_t time);

}  // namespace tracker
