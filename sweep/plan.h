#pragma once
// What a sweep computes, as rows of the job table: for every sampled
// check-in, one build job and one evaluation job per suite that waits for it.
// Pure: values in, job specs out. A job's key is what it computes, so planning
// the same range twice (or from two sweeps) enqueues nothing twice.
#include <string>
#include <vector>

#include "db/jobs.h"

namespace sweep {

inline constexpr const char* kBuildJob = "build";
inline constexpr const char* kEvalJob = "eval";

/// A check-in of the repository, or a prebuilt toolchain standing for one.
struct PlannedCheckin {
  std::string sha;        ///< commit sha, or toolchain_id() of the directory
  std::string toolchain;  ///< the toolchain's directory; "" for a check-in
  std::string label;      ///< a toolchain's label
  std::int64_t time = 0;  ///< a toolchain's date (seconds since the epoch)
};

struct PlannedSuite {
  std::string name_or_dir;
  std::string manifest_hash;
};

struct PlanInput {
  std::string repo;  ///< repository location ("" when sweeping toolchains only)
  std::string recipe;  ///< name or file, as the workers load it
  std::string recipe_hash;
  std::string policy;  ///< the policy file
  std::string policy_hash;
  std::vector<PlannedCheckin> checkins;  ///< in sweep order
  std::vector<PlannedSuite> suites;
  int priority = 0;  ///< bisection outranks the sweep
};

std::vector<db::JobSpec> plan_jobs(const PlanInput& input);

/// The keys plan_jobs gives a check-in's build and its evaluation on a suite.
std::string build_job_key(const PlanInput& input, const PlannedCheckin& checkin);
std::string eval_job_key(const PlanInput& input, const PlannedCheckin& checkin, const PlannedSuite& suite);

}  // namespace sweep
