#include "sweep/candidate_key.h"

#include <doctest/doctest.h>

using sweep::candidate_key;
using sweep::CandidateInputs;
using sweep::same_candidate;

TEST_CASE("a retrain's candidate is another one when any suite it is trained, chosen or judged on changes") {
  CandidateInputs base{"train@0123456789abcdef", {"hold@fedcba9876543210"}, "", "default"};
  auto key = candidate_key(base);
  CHECK(same_candidate(key, candidate_key(base)));
  // Recorded before validation suites were part of the key: without one, the same.
  CHECK(same_candidate(
      R"({"holdout":["hold@fedcba9876543210"],"settings":"default","training":"train@0123456789abcdef"})", key));
  auto with_validation = base;
  with_validation.validation = "valid@1111111111111111";
  CHECK_FALSE(same_candidate(key, candidate_key(with_validation)));
  auto other_validation = with_validation;
  other_validation.validation = "valid@2222222222222222";  // the suite rebuilt
  CHECK_FALSE(same_candidate(candidate_key(with_validation), candidate_key(other_validation)));
  auto other_holdout = base;
  other_holdout.holdout.push_back("hold2@3333333333333333");
  CHECK_FALSE(same_candidate(key, candidate_key(other_holdout)));
  auto other_settings = base;
  other_settings.settings = "gate";
  CHECK_FALSE(same_candidate(key, candidate_key(other_settings)));
  CHECK_FALSE(same_candidate("not json", key));
}
