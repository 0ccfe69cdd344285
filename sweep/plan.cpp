#include "sweep/plan.h"

#include <nlohmann/json.hpp>

namespace sweep {

std::string build_job_key(const PlanInput& in, const PlannedCheckin& c) {
  return std::string(kBuildJob) + ":" + in.recipe_hash + ":" + (c.toolchain.empty() ? in.repo : c.toolchain) + "@" + c.sha;
}

std::string eval_job_key(const PlanInput& in, const PlannedCheckin& c, const PlannedSuite& s) {
  return std::string(kEvalJob) + ":" + in.recipe_hash + ":" + (c.toolchain.empty() ? in.repo : c.toolchain) + "@" +
         c.sha + ":" + in.policy_hash + ":" + s.manifest_hash;
}

std::vector<db::JobSpec> plan_jobs(const PlanInput& in) {
  std::vector<db::JobSpec> out;
  for (const auto& c : in.checkins) {
    nlohmann::json where = {{"recipe", in.recipe}, {"recipe_hash", in.recipe_hash}, {"sha", c.sha}};
    if (c.toolchain.empty()) where["repo"] = in.repo;
    else where.update({{"toolchain", c.toolchain}, {"label", c.label}, {"time", c.time}});
    int build_index = static_cast<int>(out.size());
    out.push_back({kBuildJob, build_job_key(in, c), where.dump(), in.priority, -1, 3});
    for (const auto& s : in.suites) {
      auto payload = where;
      payload.update({{"suite", s.name_or_dir},
                     {"suite_hash", s.manifest_hash},
                     {"policy", in.policy},
                     {"policy_hash", in.policy_hash}});
      out.push_back({kEvalJob, eval_job_key(in, c, s), payload.dump(), in.priority, build_index, 3});
    }
  }
  return out;
}

}  // namespace sweep
