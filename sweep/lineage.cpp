#include "sweep/lineage.h"

#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/read_file.h"
#include "common/data_dir.h"
#include "policy/model.h"

namespace sweep {
namespace fs = std::filesystem;

namespace {

TrackedPolicy from_row(const db::LineageRow& r) { return {r.file, r.content_hash, r.trained_commit, r.id}; }

}  // namespace

fs::path kept_policy_file(const fs::path& data_dir, const std::string& content_hash) {
  return data_dir / "policies" / (content_hash.substr(0, 16) + ".policy");
}

/// The policy the project tracks, as tracked_policy, without needing its
/// file: `policy rollback` and `promote` must work when it is what is gone,
/// and (`file_may_be_gone`) when the project file's policy is.
TrackedPolicy lineage_policy(db::Database& db, const ProjectFile& p, bool file_may_be_gone) {
  if (file_may_be_gone && !fs::exists(p.policy))
    if (auto active = db::active_policy(db, p.name)) return from_row(*active);
  const auto meta = policy::read_policy_metadata(p.policy).take();
  TrackedPolicy named{p.policy, meta.content_hash, meta.compiler_commit, 0};
  auto in_lineage = db::lineage_of(db, p.name, meta.content_hash);
  if (!in_lineage) return named;
  auto active = db::active_policy(db, p.name);
  return from_row(active ? *active : *in_lineage);
}

TrackedPolicy tracked_policy(db::Database& db, const ProjectFile& p) {
  auto tracked = lineage_policy(db, p, false);
  if (tracked.lineage_id != 0 && !fs::exists(tracked.file))
    throw common::Fatal("the active policy of project '" + p.name + "' (" + tracked.content_hash.substr(0, 12) +
                        ") is recorded at " + tracked.file +
                        ", which no longer exists (`driftwatch policy rollback` or `promote` another)");
  return tracked;
}

TrackedPolicy ensure_lineage(db::Database& db, const ProjectFile& p, const fs::path& data_dir,
                             bool file_may_be_gone) {
  auto tracked = lineage_policy(db, p, file_may_be_gone);
  if (tracked.lineage_id != 0) return tracked;
  // The whole network, weights and all: the copy kept here is the only file
  // a rollback can go back to, and a root whose weights do not fit its
  // metadata would be recorded active for good. Unless an evaluation of
  // these very bytes finished: then its network loaded, and a command that
  // only reads the database (decide after a sweep) needs no LibTorch.
  if (!db::policy_was_evaluated(db, tracked.content_hash)) (void)policy::PolicyModel::load(p.policy).take();
  const auto meta = policy::read_policy_metadata(p.policy).take();
  auto kept = kept_policy_file(data_dir, tracked.content_hash);
  common::ensure_writable_dir(kept.parent_path(), "policy directory");
  if (!fs::exists(kept)) {  // the file's own bytes: its content hash stays what it is
    // Read with every read checked: a short read kept as the lineage's copy
    // would be the only file a rollback can go back to.
    common::write_file_atomically(kept, common::read_file(p.policy).take()).take();
  }
  db::LineageRow row;
  row.project = p.name;
  row.name = meta.name;
  row.content_hash = meta.content_hash;
  row.file = kept.string();
  row.trained_commit = meta.compiler_commit;
  row.suites_json = nlohmann::json{{"training", meta.corpus}}.dump();
  row.state = "active";
  row.reason = "the project file's policy (" + p.policy + ")";
  auto id = db::add_to_lineage(db, row, meta.training.empty() ? "{}" : meta.training);
  return {kept.string(), meta.content_hash, meta.compiler_commit, id};
}

ProjectFile with_tracked_policy(db::Database& db, ProjectFile project) {
  project.policy = tracked_policy(db, project).file;
  return project;
}

}  // namespace sweep

namespace sweep {

bool was_judged(const db::LineageRow& row) { return !nlohmann::json::parse(row.figures_json, nullptr, false).empty(); }

db::LineageRow promote_by_hand(db::Database& db, const ProjectFile& p, const fs::path& data_dir, db::Id id) {
  auto active = ensure_lineage(db, p, data_dir, true);
  auto row = db::find_lineage(db, p.name, id);
  if (!row)
    throw common::Fatal("project '" + p.name + "' has no policy " + std::to_string(id) +
                        " (see `driftwatch policy list`)");
  if (row->id == active.lineage_id) throw common::Fatal("policy " + std::to_string(id) + " is already the active one");
  // A candidate is judged on the held-out suites by its retrain, which
  // records the figures and then promotes it, rejects it, or (--promote
  // never) leaves it a candidate. One without figures is being judged, or
  // its retrain died before the verdict or could not judge it: nothing to
  // stand on. A retired policy was active once and may come back.
  if ((row->state == "candidate" || row->state == "rejected") && !was_judged(*row))
    throw common::Fatal("policy " + std::to_string(id) +
                        " was never judged (its retrain is running, stopped before the held-out verdict, or could not "
                        "evaluate it); not promoted: run `driftwatch retrain` again");
  if (!fs::exists(row->file))
    throw common::Fatal("policy " + std::to_string(id) + "'s file " + row->file + " no longer exists; not promoted");
  // What its retrain had judged stays in its history: a person overruled
  // it, and whoever rolls it back later should still read why.
  auto reason = row->reason.empty() || row->state == "retired"
                    ? std::string("promoted by hand")
                    : "promoted by hand; its retrain had said: " + row->reason;
  if (!db::promote(db, p.name, id, active.lineage_id, reason, "promoted by hand"))
    throw common::Fatal("the active policy of project '" + p.name +
                        "' changed meanwhile; nothing was changed, try again");
  return *db::find_lineage(db, p.name, id);
}

db::LineageRow roll_back(db::Database& db, const ProjectFile& p, const fs::path& data_dir) {
  auto active = ensure_lineage(db, p, data_dir, true);
  auto row = db::find_lineage(db, p.name, active.lineage_id);
  if (!row || row->parent_id == 0)
    throw common::Fatal("the active policy of project '" + p.name + "' has no parent to roll back to");
  auto parent = db::find_lineage(db, p.name, row->parent_id);
  if (!parent || !fs::exists(parent->file))
    throw common::Fatal("the parent policy's file " + (parent ? parent->file : std::string("?")) +
                        " no longer exists; nothing was changed");
  if (!db::promote(db, p.name, parent->id, row->id, "rolled back from " + row->content_hash.substr(0, 12)))
    throw common::Fatal("the active policy of project '" + p.name +
                        "' changed meanwhile; nothing was changed, try again");
  return *db::find_lineage(db, p.name, parent->id);
}

}  // namespace sweep
