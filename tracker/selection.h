#pragma once
// Choosing the check-ins of a range: the first-parent walk plus sampling.
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "tracker/git.h"
#include "tracker/sampling.h"

namespace tracker {

struct RangeOptions {
  std::string branch;               ///< "" for HEAD
  std::optional<std::string> from;  ///< inclusive
  std::optional<std::string> to;    ///< default: the branch tip
  std::optional<std::int64_t> since, until;
  SamplingRule sampling;
};

/// The sampled check-ins, oldest first. An empty result is an error that
/// names the range, since a sweep over nothing is always a mistake.
common::Result<std::vector<CommitInfo>> select_commits(const GitRepo& repo, const RangeOptions& options);

}  // namespace tracker
