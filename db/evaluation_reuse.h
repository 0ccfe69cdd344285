#pragma once
// Finding an evaluation whose results another may take: a done evaluation of
// the same policy and suite whose summary records the same reuse key
// (sweep/reuse_key.h). No column of its own: the key lives in the summary.
#include <optional>
#include <string>
#include <vector>

#include "db/store.h"

namespace db {

/// An earlier evaluation's rows, read in one snapshot.
struct ReusableEvaluation {
  Id evaluation_id = 0;
  std::string commit;   ///< its build's check-in (full sha)
  std::string subject;  ///< and its subject (a toolchain's label)
  std::string summary_json, compat_json;
  std::vector<ModuleResultRow> results;
  std::vector<MeasurementRow> measurements;
};

/// The done evaluation of (policy, suite) whose summary's "reuse_key" is
/// `key` and none of whose modules timed out (a timeout depends on the
/// machine's load, not on the compiler): `current` itself when it was stored
/// so before (begin_evaluation keeps a done row's figures), then one that
/// computed its results before one that took them. Nothing when there is none.
/// How a module result is told to be the machine's (evaluator/evaluation.h
/// owns the rule; the query only applies it).
struct MachineFailureRule {
  std::string outcomes;        ///< comma-separated: outcomes that always are
  std::string crashed;         ///< the crash outcome, which is when its message holds one of `crash_markers`
  /// What a crash of the machine's says: the SIGKILL marker, running out of memory.
  std::vector<std::string> crash_markers;
  /// How the message of a result that failed so again when compiled alone
  /// begins: the compiler's doing whatever its outcome (a hang), never the machine's.
  std::string failed_again_alone;
  /// `crash_markers` as one query parameter, split in SQL on the unit
  /// separator (no compiler's crash phrase holds one).
  std::string crash_markers_param() const {
    std::string out;
    for (const auto& m : crash_markers) out += (out.empty() ? "" : "\x1f") + m;
    return out;
  }
};
std::optional<ReusableEvaluation> find_reusable_evaluation(Database& db, Id policy_id, Id suite_id,
                                                           const std::string& key, Id current,
                                                           const MachineFailureRule& machine);

}  // namespace db
