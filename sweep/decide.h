#pragma once
// `driftwatch decide`: the project's retraining rules applied to each of its
// suites' series (the tracked policy, from its training check-in on), the
// verdict recorded with its evidence, keep included.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "db/database.h"
#include "db/store.h"
#include "reports/retraining.h"
#include "sweep/project_file.h"

namespace sweep {

struct DecideReport {
  bool retrain = false;
  std::string policy_name, policy_hash, baseline;  ///< baseline: the policy's training check-in ("" if unknown)
  bool baseline_in_history = false;
  /// The training check-in lies before the project's range (`from`,
  /// `since`): the rules measure from the range's first evaluated check-in.
  bool baseline_before_range = false;
  std::string head;  ///< the branch's head
  db::Id lineage_id = 0, decision_id = 0;
  std::vector<reports::SuiteDecision> suites;
  std::vector<reports::RetrainSeries> series;  ///< what the rules read, per suite
  std::string first, last;                     ///< the check-in range the evidence covers
  /// The newest check-in measured on any suite: where `decide --act`
  /// retrains. Not the branch's head, which moves every night: a candidate
  /// rejected there would be trained again at each new head, for hours.
  std::string measured_head;
  /// Sampled check-ins of the range with no point in a suite's series (their
  /// evaluation, or the build it waits on, did not finish), oldest first:
  /// the rules read the check-ins around them, which people are told.
  struct NotMeasured {
    std::string suite, sha, why;
    bool after_head = false;  ///< after its suite's newest measured check-in: this decision does not read it
  };
  std::vector<NotMeasured> not_measured;
  /// Toolchains' labels by their ids (sweep/timeline.h), for naming them.
  std::map<std::string, std::string> labels;
  /// How a check-in of this report is named to people: a toolchain by its
  /// label, a commit by its short sha.
  std::string name_of(const std::string& sha) const;
  /// Everything above, as `decide --json` prints it and the decision's evidence.
  std::string json() const;
};

/// Reads the series, applies the rules, records the decision. Throws
/// common::Fatal (one line) when there is nothing to decide on: no
/// history (neither repository nor toolchains), or no evaluated check-in of the tracked policy on any suite.
DecideReport run_decide(db::Database& db, const ProjectFile& project, const std::filesystem::path& data_dir);

}  // namespace sweep
