// Planning a sweep as jobs: keys name what a job computes, evaluations wait
// for their build. Pure: no database.
#include <doctest/doctest.h>

#include <set>

#include "sweep/plan.h"

namespace {

sweep::PlanInput input() {
  sweep::PlanInput in;
  in.repo = "/repos/llvm";
  in.recipe = "llvm-project";
  in.recipe_hash = "r1";
  in.policy = "/p/a.policy";
  in.policy_hash = "p1";
  in.checkins = {{"aaa", "", "", 0}, {"bbb", "", "", 0}};
  in.suites = {{"holdout", "m1"}, {"train", "m2"}};
  return in;
}

}  // namespace

TEST_CASE("every check-in gets a build and one evaluation per suite that depends on it") {
  auto jobs = sweep::plan_jobs(input());
  REQUIRE(jobs.size() == 6);
  CHECK(jobs[0].kind == "build");
  CHECK(jobs[0].depends_on == -1);
  CHECK(jobs[1].kind == "eval");
  CHECK(jobs[1].depends_on == 0);
  CHECK(jobs[2].depends_on == 0);
  CHECK(jobs[3].kind == "build");
  CHECK(jobs[4].depends_on == 3);
  CHECK(jobs[5].depends_on == 3);
  std::set<std::string> keys;
  for (const auto& j : jobs) keys.insert(j.key);
  CHECK(keys.size() == jobs.size());
}

TEST_CASE("a job's key changes with exactly what it computes") {
  auto base = sweep::plan_jobs(input());
  CHECK(sweep::plan_jobs(input())[1].key == base[1].key);  // planning twice: the same jobs
  auto other_policy = input();
  other_policy.policy_hash = "p2";
  auto a = sweep::plan_jobs(other_policy);
  CHECK(a[0].key == base[0].key);  // the build is shared
  CHECK(a[1].key != base[1].key);  // the evaluation is not
  auto other_recipe = input();
  other_recipe.recipe_hash = "r2";
  CHECK(sweep::plan_jobs(other_recipe)[0].key != base[0].key);
  auto other_suite = input();
  other_suite.suites[0].manifest_hash = "m9";
  CHECK(sweep::plan_jobs(other_suite)[1].key != base[1].key);
  CHECK(sweep::plan_jobs(other_suite)[2].key == base[2].key);
}

TEST_CASE("a toolchain is keyed by its directory and carries it to the worker") {
  auto in = input();
  in.checkins = {{"toolchain-1", "/opt/nightly/a", "a", 1767571200}};
  auto jobs = sweep::plan_jobs(in);
  REQUIRE(jobs.size() == 3);
  CHECK(jobs[0].key.find("/opt/nightly/a@toolchain-1") != std::string::npos);
  CHECK(jobs[0].payload_json.find("\"toolchain\":\"/opt/nightly/a\"") != std::string::npos);
  CHECK(jobs[0].payload_json.find("\"repo\"") == std::string::npos);
}
