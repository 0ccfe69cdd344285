#pragma once
// What `driftwatch jobs` prints: the queue for people (a table) and for
// monitoring (JSON). Pure: rows in, text out.
#include <string>
#include <vector>

#include "db/jobs.h"

namespace sweep {

/// "build 1a2b3c4d5e6f", "eval 1a2b3c4d5e6f testdata", "build nightly (toolchain)".
std::string job_what(const db::JobRow& job);
/// The queue as a table: counts, then one line per job (running, queued, failed, …).
/// `truncated`: more jobs matched than `jobs` holds (said, never silent);
/// `sweep_id`: the counts are that sweep's (`jobs --sweep`), not 0.
std::string render_jobs_table(const std::vector<db::JobRow>& jobs, const db::JobCounts& counts,
                              const std::string& project, bool truncated = false, db::Id sweep_id = 0);
/// The same as JSON: {"counts": {...}, "jobs": [...], "truncated": bool}, times in seconds.
std::string render_jobs_json(const std::vector<db::JobRow>& jobs, const db::JobCounts& counts, bool truncated = false);

}  // namespace sweep
