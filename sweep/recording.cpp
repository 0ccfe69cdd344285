#include "sweep/recording.h"

#include <functional>

namespace sweep {

namespace {

/// The root commit for db::upsert_repository; a repository that cannot be
/// walked stops the command with libgit2's reason.
std::function<std::string()> root_of(const tracker::GitRepo& repo, const std::string& rev) {
  return [&repo, rev] { return repo.root_commit(rev).take(); };
}

}  // namespace

db::Id record_repository(db::Database& database, const tracker::GitRepo& repo, const std::string& sha) {
  return db::upsert_repository(database, repo.location().string(), root_of(repo, sha));
}

std::optional<db::Id> recorded_repository(db::Database& database, const tracker::GitRepo& repo,
                                          const std::string& rev) {
  return db::find_repository(database, repo.location().string(), root_of(repo, rev));
}

std::vector<db::SeriesPoint> series_of_repository(db::Database& database, std::optional<db::Id> repository_id,
                                                  const std::string& recipe_hash, const std::string& policy_hash,
                                                  const std::string& suite_manifest_hash) {
  if (!repository_id) return {};
  return db::load_series(database, *repository_id, recipe_hash, policy_hash, suite_manifest_hash);
}

db::Id record_commit(db::Database& database, const tracker::GitRepo& repo, const tracker::CommitInfo& c) {
  auto repo_id = record_repository(database, repo, c.sha);
  return db::upsert_commit(database, repo_id, {c.sha, c.parents, c.author, c.time, c.subject});
}

db::Id record_build(db::Database& database, const tracker::GitRepo& repo, const builder::Recipe& recipe,
                    const tracker::CheckinBuild& b) {
  auto commit_id = record_commit(database, repo, b.commit);
  const auto& r = b.result;
  // A timeout, the OOM killer, a full disk say nothing of the check-in: the
  // build it already has (or none) stands, and drift never takes it for
  // broken. (A worker clears `transient` for a job's last timed-out attempt.)
  if (r.transient) return 0;
  auto recipe_id = db::upsert_recipe(database, recipe.name, recipe.content_hash, recipe.description);
  return db::record_build(database, {commit_id, recipe_id, std::string(builder::outcome_name(r.outcome)), r.seconds,
                                     r.artifacts.empty() ? "" : r.artifacts.begin()->second.parent_path().string(),
                                     r.log.string(), r.log_tail});
}

db::Id record_toolchain(db::Database& database, const builder::Recipe& recipe, const std::filesystem::path& dir,
                        const std::string& label, std::int64_t time, const std::string& outcome,
                        const std::string& message) {
  auto repo_id = db::upsert_repository(database, toolchains_location(recipe.name));
  auto commit_id = db::upsert_commit(database, repo_id, {toolchain_id(dir), {}, "", time, label});
  auto recipe_id = db::upsert_recipe(database, recipe.name, recipe.content_hash, recipe.description);
  return db::record_build(database, {commit_id, recipe_id, outcome, 0, dir.string(), "", message});
}

}  // namespace sweep
