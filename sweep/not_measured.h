#pragma once
// Sampled check-ins a suite's series has no point at, and why: an evaluation
// job that failed, was cancelled, still waits, or was skipped because its
// build did not finish. The report and `decide` name them, so that a point
// missing from a series (and a baseline or a latest that moved past it) is
// never silent. Pure: the jobs come from db::unfinished_evaluations.
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "db/jobs.h"

namespace sweep {

struct NotMeasured {
  std::string sha;
  std::size_t position = 0;  ///< in the first-parent history
  std::string why;           ///< "its evaluation failed (job 12: …); the next sweep tries it again"
};

/// One line for people: why `job` gave no result, and what happens next.
std::string unfinished_reason(const db::UnfinishedEvaluation& job);

/// Of `jobs`, those at a check-in of `position`, at or after `from` when
/// given, that `recorded` lacks (the check-ins the series has a point at:
/// measured, or a build or a policy failure recorded there); oldest first,
/// one per check-in.
std::vector<NotMeasured> not_measured(const std::vector<db::UnfinishedEvaluation>& jobs,
                                      const std::map<std::string, std::size_t>& position,
                                      const std::set<std::string>& recorded, std::optional<std::size_t> from);

}  // namespace sweep
