#pragma once
// One evaluation of a policy on a build and a suite, stored in the database:
// shared by `eval` and `demo` (and later the sweep).
#include <nlohmann/json.hpp>

#include "cli/build_selection.h"
#include "cli/suite_selection.h"
#include "evaluator/evaluation.h"
#include "policy/model.h"

namespace cli {

struct StoredEvaluation {
  evaluator::EvaluationResult result;
  nlohmann::json json;  ///< what `eval --json` prints; also the stored summary
  db::Id evaluation_id = 0;
};

/// Evaluates, stores (idempotently) and returns the result. Throws
/// common::Fatal when the policy cannot run on this build at all.
StoredEvaluation evaluate_and_store(const Context& ctx, db::Database& database, const SelectedBuild& build,
                                    const SelectedSuite& suite, const policy::PolicyModel& model, int jobs,
                                    bool keep_objects = false);

}  // namespace cli
