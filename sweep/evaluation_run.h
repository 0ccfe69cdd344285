#pragma once
// One evaluation of a policy on a build and a suite, stored in the database:
// shared by `eval`, the demo and the sweep's evaluation jobs.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>

#include "common/result.h"
#include "db/jobs.h"
#include "evaluator/evaluation.h"
#include "policy/model.h"
#include "sweep/compiler_build.h"
#include "sweep/suite_selection.h"

namespace sweep {

struct StoredEvaluation {
  evaluator::EvaluationResult result;
  nlohmann::json json;  ///< what `eval --json` prints; also the stored summary
  db::Id evaluation_id = 0;
  /// "" when compiled; else "reused from <sha12>'s evaluation <id>: identical compiler <digest12>".
  std::string reused_from;
  /// With keep_objects: <data>/objects/<evaluation id>, holding default/ and learned/.
  std::filesystem::path kept_objects;
};

struct EvaluationRunOptions {
  std::filesystem::path data_dir;  ///< objects and FIFOs go under <data>/eval/
  int jobs = 1;
  bool keep_objects = false;
  std::function<void(int done, int total, const evaluator::ModuleResult&)> progress;
  db::JobFinish* finish = nullptr;  ///< marks this job done with the stored results (its result is filled in)
  /// Take the results of an earlier done evaluation of a byte-identical
  /// compiler on the same suite with the same policy (sweep/reuse_key.h)
  /// instead of compiling; false compiles anyway.
  bool reuse = true;
  /// The job's last attempt, after as many that failed so (db::Job::
  /// final_attempt): a failure that looked like the machine's (a timeout, a
  /// broken channel) but came back every time is the check-in's result after
  /// all (EvaluationFailed), not another failed attempt; one only the machine
  /// can cause (common::Error::machine_only) never is.
  bool last_attempt = false;
  /// A database lost while storing is reconnected to (for up to a minute) and
  /// the results stored there. Only for a caller that holds no session state
  /// (`driftwatch eval`): a retrain's lock went with the old session.
  bool reconnect = false;
  /// Compile every module's default, also where the learned compile took
  /// every default decision (evaluator::EvaluationOptions::default_slot).
  bool compile_every_default = false;
};

/// The policy cannot run on this build at all (its features are gone, the
/// compiler never consults it, no module compiles: not by the machine's
/// doing, or so on every attempt of the job): a result of the check-in,
/// already stored as a failed evaluation. Any other exception is a failure
/// of the attempt (the database, the disk), which a sweep retries.
/// `compiler_broken`: the compiler compiled nothing even without the policy
/// (no module, or not the default-decision probe), so neither policy can be
/// judged here: a broken check-in, never a verdict on the policy.
class EvaluationFailed : public common::Fatal {
 public:
  explicit EvaluationFailed(const std::string& message, bool compiler_broken = false)
      : common::Fatal(message), compiler_broken(compiler_broken) {}
  bool compiler_broken;
};

/// An attempt that failed in a way the machine may have caused: tried again.
/// `ambiguous`: the policy or the compiler may have caused it as well (a
/// hang, a kill), so that every attempt failing so makes it the check-in's
/// result (db::retry_job_later); otherwise only the machine can have.
class AttemptFailed : public common::Fatal {
 public:
  AttemptFailed(const std::string& message, bool ambiguous) : common::Fatal(message), ambiguous(ambiguous) {}
  bool ambiguous;
};

/// Evaluates, stores (idempotently: a rerun replaces the rows) and returns the
/// result. An evaluation whose compiler, suite, policy and compile command
/// match an earlier one's is stored complete with that one's rows (no
/// compile), its summary saying where they came from (see `reuse`). Throws
/// EvaluationFailed when the policy cannot run on this build at all; the
/// evaluation is then stored as failed with that message.
StoredEvaluation evaluate_and_store(db::Database& database, const SelectedBuild& build, const SelectedSuite& suite,
                                    const policy::PolicyModel& model, const EvaluationRunOptions& options);

}  // namespace sweep
