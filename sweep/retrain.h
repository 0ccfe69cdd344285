#pragma once
// `driftwatch retrain`: a candidate trained at the head check-in (or another)
// on the project's training suite, warm-started from the active policy;
// candidate and active evaluated at that build on the held-out suites (never
// the training suite); promoted only when it wins by the margin without
// making more modules worse than allowed. Every candidate is recorded in the
// lineage with its figures, and why it was rejected. An interrupted retrain
// resumes from its checkpoint.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "db/database.h"
#include "db/store.h"
#include "policy/train.h"
#include "reports/retraining.h"
#include "sweep/project_file.h"

namespace sweep {

struct RetrainOptions {
  ProjectFile project;
  std::filesystem::path data_dir;
  std::string at;       ///< a rev of the repository; "" = the branch's head
  std::string promote;  ///< auto | never; "" = the project's
  int jobs = 0;         ///< parallel compiles; 0 = the project's, else one per core
  std::function<void(const std::string&)> log;
  std::function<void(const policy::TrainProgress&)> train_progress;
};

struct HeldOutSuite {
  std::string suite;
  double active_uplift = 0, candidate_uplift = 0;
  int active_losses = 0, candidate_losses = 0, modules = 0;
};

struct RetrainReport {
  std::string checkin;  ///< where the candidate was trained and judged
  std::string active_hash, candidate_hash, candidate_file;
  db::Id active_id = 0, candidate_id = 0;  ///< lineage rows
  bool resumed = false;
  bool trained = true;      ///< false: the same candidate was judged before (reason), nothing trained
  double train_uplift = 0;  ///< training's own figure (for the record, never the verdict)
  std::string train_uplift_on = "training";  ///< the suite that figure is of: the validation suite when there is one
  std::vector<HeldOutSuite> holdout;
  reports::HeldOutFigures active, candidate;
  bool promoted = false;
  std::string state;  ///< active, rejected, candidate (--promote never)
  std::string reason;
  double seconds = 0, train_seconds = 0;
};

/// The training settings by name: "shipped" or "small" (a quick trial). Either way an
/// active gate policy is refitted as a gate on its own grid (retrain).
policy::TrainOptions training_settings(const std::string& name);

/// Throws common::Fatal (one line, nothing changed) when something is
/// missing: no repository, no evaluated check-in of the active policy, a
/// suite not built, a check-in that does not build, a training that diverged.
RetrainReport run_retrain(db::Database& db, const RetrainOptions& options);

}  // namespace sweep
