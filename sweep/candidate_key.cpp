#include "sweep/candidate_key.h"

#include <nlohmann/json.hpp>

namespace sweep {

std::string candidate_key(const CandidateInputs& in) {
  nlohmann::json key{{"training", in.training}, {"holdout", in.holdout}, {"settings", in.settings}};
  if (!in.validation.empty()) key["validation"] = in.validation;
  return key.dump();
}

bool same_candidate(const std::string& recorded, const std::string& key) {
  auto r = nlohmann::json::parse(recorded, nullptr, false);
  return !r.is_discarded() && r == nlohmann::json::parse(key);
}

}  // namespace sweep
