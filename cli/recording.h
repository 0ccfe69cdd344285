#pragma once
// Writing what the tracker and builder did into the database.
#include "builder/recipe.h"
#include "db/store.h"
#include "tracker/checkin_build.h"

namespace cli {

db::Id record_commit(db::Database& database, const tracker::GitRepo& repo, const tracker::CommitInfo& commit);
/// Records the build of a check-in (its commit, recipe and outcome); returns the build id.
db::Id record_build(db::Database& database, const tracker::GitRepo& repo, const builder::Recipe& recipe,
                    const tracker::CheckinBuild& build);

}  // namespace cli
