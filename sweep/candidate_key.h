#pragma once
// What makes a retrain's candidate, besides the active policy it starts from
// and the seed: the suites it is trained on, chosen on and judged on, and its
// settings. A candidate judged with the same key at the same check-in is not
// trained again (a nightly `decide --act` would spend hours on it each night).
#include <string>
#include <vector>

namespace sweep {

struct CandidateInputs {
  std::string training;              ///< "name@manifest hash", as the suites are named below
  std::vector<std::string> holdout;  ///< judged on
  std::string validation;            ///< chosen on; "" for none
  std::string settings;              ///< the named training settings
};

/// The key as JSON text, the same for the same inputs. Without a validation
/// suite it is the key candidates were recorded with before validation
/// suites were part of it.
std::string candidate_key(const CandidateInputs& in);

/// Whether `recorded` (a lineage row's suites) is `key`; false for text that
/// is not JSON.
bool same_candidate(const std::string& recorded, const std::string& key);

}  // namespace sweep
