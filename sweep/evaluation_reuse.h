#pragma once
// Taking an earlier evaluation's results for a byte-identical compiler
// (sweep/reuse_key.h): the key of an evaluation about to run, and the result
// an earlier evaluation's stored rows describe.
#include <string>
#include <vector>

#include "db/evaluation_reuse.h"
#include "evaluator/evaluation.h"
#include "policy/model.h"
#include "sweep/compiler_build.h"
#include "sweep/suite_selection.h"

namespace sweep {

struct EvaluationKey {
  std::string key;              ///< "" when it cannot be known (an artifact unreadable): never reuse then
  std::string compiler_digest;  ///< see sweep::compiler_digest
};

/// How a stored module result is told to be the machine's, for queries:
/// evaluator::HeuristicResult::machine_failure's rule (a timeout, a broken
/// channel, a crash killed or out of memory, …).
db::MachineFailureRule machine_failure_rule();

/// Hashes every artifact of `build` and the suite's own module command lines.
EvaluationKey evaluation_key(const SelectedBuild& build, const SelectedSuite& suite,
                             const policy::PolicyMetadata& policy, bool compile_every_default);

/// The result `source`'s rows describe, for `suite`'s modules (`bench_ids` in
/// suite order): modules, summaries, links, warnings and the feature report
/// as they were computed; `seconds` is left for the caller.
evaluator::EvaluationResult result_from_rows(const evaluator::Suite& suite, const std::vector<db::Id>& bench_ids,
                                             const db::ReusableEvaluation& source);

}  // namespace sweep
