#pragma once
// Which policy a project tracks. The project file names the policy a project
// starts from; once `retrain` promotes a candidate (or a person promotes or
// rolls back), the active policy of the project's lineage in the database is
// tracked instead, and its training check-in is the baseline drift is
// measured from. Naming another policy in the project file starts over from it.
#include <filesystem>
#include <string>

#include "db/database.h"
#include "db/policies.h"
#include "sweep/project_file.h"

namespace sweep {

struct TrackedPolicy {
  std::string file;  ///< the policy file to evaluate
  std::string content_hash;
  std::string trained_commit;  ///< the baseline, as the policy records it
  db::Id lineage_id = 0;       ///< 0 when the lineage does not hold it yet
};

/// Read-only: the lineage's active policy when the project file's policy is
/// part of the lineage, else the project file's policy.
TrackedPolicy tracked_policy(db::Database& db, const ProjectFile& project);

/// The same, recording the project file's policy as the lineage's active
/// root (a copy kept under the data directory) when the lineage lacks it.
/// `file_may_be_gone`: for the lineage's own commands (list, promote,
/// rollback), which must work when the project file's policy is gone and the
/// lineage has an active one; everything else is told the file is missing.
TrackedPolicy ensure_lineage(db::Database& db, const ProjectFile& project, const std::filesystem::path& data_dir,
                             bool file_may_be_gone = false);

/// Where driftwatch keeps a policy file of a lineage: <data>/policies/<hash>.policy.
std::filesystem::path kept_policy_file(const std::filesystem::path& data_dir, const std::string& content_hash);

/// Whether a retrain judged the lineage's policy `row`: its figures are
/// recorded. One without is being judged, or its retrain died before the
/// verdict or could not judge it.
bool was_judged(const db::LineageRow& row);

/// The project with its tracked policy in place of the project file's.
ProjectFile with_tracked_policy(db::Database& db, ProjectFile project);

}  // namespace sweep

namespace sweep {

/// A person's promotion of a policy of the project's lineage (a candidate, a
/// rejected or a retired one). Throws common::Fatal naming what is wrong.
db::LineageRow promote_by_hand(db::Database& db, const ProjectFile& project, const std::filesystem::path& data_dir,
                               db::Id id);
/// Makes the active policy's parent active again; returns it.
db::LineageRow roll_back(db::Database& db, const ProjectFile& project, const std::filesystem::path& data_dir);

}  // namespace sweep
