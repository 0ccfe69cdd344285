#include "cli/recording.h"

namespace cli {

db::Id record_commit(db::Database& database, const tracker::GitRepo& repo, const tracker::CommitInfo& c) {
  auto repo_id = db::upsert_repository(database, repo.location().string());
  return db::upsert_commit(database, repo_id, {c.sha, c.parents, c.author, c.time, c.subject});
}

db::Id record_build(db::Database& database, const tracker::GitRepo& repo, const builder::Recipe& recipe,
                    const tracker::CheckinBuild& b) {
  auto commit_id = record_commit(database, repo, b.commit);
  auto recipe_id = db::upsert_recipe(database, recipe.name, recipe.content_hash, recipe.description);
  const auto& r = b.result;
  return db::record_build(database, {commit_id, recipe_id, std::string(builder::outcome_name(r.outcome)), r.seconds,
                                     r.artifacts.empty() ? "" : r.artifacts.begin()->second.parent_path().string(),
                                     r.log.string(), r.log_tail});
}

}  // namespace cli
