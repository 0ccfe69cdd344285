#pragma once
// Writing what the tracker and builder did into the database.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "builder/recipe.h"
#include "db/drift.h"
#include "db/store.h"
#include "sweep/timeline.h"
#include "tracker/checkin_build.h"

namespace sweep {

/// The repository's row, found by its path or, for a path not seen before,
/// by the first commit of the first-parent line ending at `sha`
/// (db::upsert_repository), so a checkout moved since the last sweep keeps
/// its series.
db::Id record_repository(db::Database& database, const tracker::GitRepo& repo, const std::string& sha);
/// The same row for commands that only read (report, decide): none when
/// nothing of this repository was recorded. `rev`: the tracked line.
std::optional<db::Id> recorded_repository(db::Database& database, const tracker::GitRepo& repo,
                                          const std::string& rev);
/// db::load_series of a repository that may not be recorded (then empty).
std::vector<db::SeriesPoint> series_of_repository(db::Database& database, std::optional<db::Id> repository_id,
                                                  const std::string& recipe_hash, const std::string& policy_hash,
                                                  const std::string& suite_manifest_hash);
db::Id record_commit(db::Database& database, const tracker::GitRepo& repo, const tracker::CommitInfo& commit);
/// Records the build of a check-in (its commit, recipe and outcome); returns
/// the build id, or 0 for a failure of the machine (`transient`), which
/// records the commit only.
db::Id record_build(db::Database& database, const tracker::GitRepo& repo, const builder::Recipe& recipe,
                    const tracker::CheckinBuild& build);

/// A prebuilt toolchain stands for a check-in: its "commit" is named after
/// its directory (toolchain_id), dated `time`, with its label as subject.
db::Id record_toolchain(db::Database& database, const builder::Recipe& recipe, const std::filesystem::path& dir,
                        const std::string& label, std::int64_t time, const std::string& outcome = "ok",
                        const std::string& message = "");

}  // namespace sweep
