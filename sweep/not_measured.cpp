#include "sweep/not_measured.h"

#include <fmt/core.h>

#include <algorithm>

#include "common/text.h"
#include "sweep/worker_name.h"

namespace sweep {

namespace {

std::string job_said(db::Id id, const std::string& error) {
  return error.empty() ? fmt::format("job {}", id) : fmt::format("job {}: {}", id, common::first_line(error));
}

/// A running job nobody answers for: "running" would be false, and the
/// job is not lost either (any worker, or the next sweep, takes it up).
std::string lapsed(const char* what, db::Id id, const std::string& owner) {
  return fmt::format(
      "its {} (job {}) stopped: its worker ({}) stopped renewing its lease (it, its machine or its link to the "
      "database died); a worker, or the next sweep, takes it up again",
      what, id, common::printable(owner_host_pid(owner)));
}

}  // namespace

std::string unfinished_reason(const db::UnfinishedEvaluation& j) {
  if (j.state == db::kJobFailed && j.error.starts_with(db::kCancelledPrefix))
    return "its evaluation was cancelled (" + job_said(j.id, j.error) + "); the next sweep measures it";
  if (j.state == db::kJobFailed)
    return "its evaluation failed (" + job_said(j.id, j.error) + "); the next sweep tries it again";
  // Waiting on a build whose worker died: the build is what to look at.
  if (j.state != db::kJobRunning && j.build_state == db::kJobRunning && !j.build_lapsed_owner.empty())
    return lapsed("build", j.build_id, j.build_lapsed_owner);
  if (j.state == db::kJobQueued) return fmt::format("its evaluation waits in the queue (job {})", j.id);
  if (j.state == db::kJobRunning && !j.lapsed_owner.empty()) return lapsed("evaluation", j.id, j.lapsed_owner);
  if (j.state == db::kJobRunning) return fmt::format("its evaluation is running (job {})", j.id);
  // Skipped: its build gave no compiler. A build that ran and failed is a
  // point of the series already; here it never finished.
  if (j.build_state == db::kJobFailed)
    return "its build did not finish (" + job_said(j.build_id, j.build_error) + "); the next sweep tries it again";
  if (j.build_state == db::kJobQueued || j.build_state == db::kJobRunning)
    return fmt::format("its build is {} (job {})", j.build_state == db::kJobQueued ? "queued" : "running", j.build_id);
  // A shared build rebuilt since (by another project's sweep): the next
  // sweep queues the evaluation again.
  if (j.build_state == db::kJobDone && j.build_outcome == "ok")
    return fmt::format(
        "its evaluation (job {}) was skipped, but its build (job {}) gave a compiler since; the next "
        "sweep measures it",
        j.id, j.build_id);
  return fmt::format(
      "its evaluation was skipped (job {}): its build gave no compiler{}; if the machine failed it, "
      "`driftwatch jobs retry {}` builds it again",
      j.id, j.build_outcome.empty() ? "" : " (" + j.build_outcome + ")", j.build_id);
}

std::vector<NotMeasured> not_measured(const std::vector<db::UnfinishedEvaluation>& jobs,
                                      const std::map<std::string, std::size_t>& position,
                                      const std::set<std::string>& recorded, std::optional<std::size_t> from) {
  std::map<std::size_t, NotMeasured> found;  // by position: one per check-in, in history order
  for (const auto& j : jobs) {
    auto at = position.find(j.sha);
    if (at == position.end() || recorded.count(j.sha) || (from && at->second < *from)) continue;
    // Jobs come oldest first: a check-in's newest job (of another checkout
    // of the same repository) says what happened last.
    found[at->second] = {j.sha, at->second, unfinished_reason(j)};
  }
  std::vector<NotMeasured> out;
  for (auto& [pos, n] : found) out.push_back(std::move(n));
  return out;
}

}  // namespace sweep
