#pragma once
// A project's policy lineage (the policy it started from and every candidate
// retrained from it), its one active policy, and its retraining decisions.
// Promotions are serialized through the database: a transaction-scoped
// advisory lock per project, and a unique index on the active row.
#include <optional>
#include <string>
#include <vector>

#include "db/store.h"

namespace db {

struct LineageRow {
  Id id = 0;
  std::string project;
  std::string name, content_hash;  ///< of the policy
  Id parent_id = 0;                ///< 0 for the root
  std::string file, trained_commit;
  std::string suites_json = "{}", figures_json = "{}";
  std::string state;  ///< active, retired, candidate, rejected
  std::string reason;
  std::string created_at, updated_at;  ///< ISO 8601 UTC, "2026-01-31T12:00:00Z"
};

/// The project's lineage, oldest first.
std::vector<LineageRow> list_lineage(Database& db, const std::string& project);
std::optional<LineageRow> find_lineage(Database& db, const std::string& project, Id id);
std::optional<LineageRow> active_policy(Database& db, const std::string& project);
/// The lineage row of the policy with this content hash, if the project has one.
std::optional<LineageRow> lineage_of(Database& db, const std::string& project, const std::string& content_hash);

/// Records a policy of the project (its `policies` row is made too, with
/// `metadata_json`); returns the lineage row's id. A policy already in the
/// lineage keeps its row and state; its figures and reason are replaced.
/// Added `active`, it retires the project's active policy in the same transaction.
Id add_to_lineage(Database& db, const LineageRow& row, const std::string& metadata_json);
/// A candidate's reason while a retrain judges it.
inline constexpr const char* kBeingEvaluated = "being evaluated";
/// How the reason of a candidate rejected unjudged starts: abandoned by a
/// retrain cut short, or its judging stopped by an error. Not a verdict.
inline constexpr const char* kAbandonedReason = "abandoned";
inline constexpr const char* kNotJudgedReason = "could not be judged";
/// Rejects the project's candidates still `kBeingEvaluated` other than
/// `keep`: a retrain cut short (SIGKILL, a lost machine) left them, and,
/// the head having moved, nothing would ever judge them. Returns their ids.
/// Call under the project's retrain lock, so that no other retrain's is taken.
std::vector<Id> abandon_unjudged_candidates(Database& db, const std::string& project, Id keep);
/// Updates a row's state, figures and reason (candidates judged); the active row is left alone.
void set_lineage_state(Database& db, Id id, const std::string& state, const std::string& figures_json,
                       const std::string& reason);

/// Makes `id` the project's active policy, retiring the one active now,
/// provided the active one is still `expected_active` (0: none). Serialized
/// with other promotions of the project; false when the active policy
/// changed meanwhile (nothing is changed then). `alert_note`, when given,
/// is what the alerts handed over say of it instead of `reason`.
bool promote(Database& db, const std::string& project, Id id, Id expected_active, const std::string& reason,
             const std::string& alert_note = "");

/// Records a decision with its evidence (a JSON object, its "decision_id"
/// set to the new id); returns the id. One the same as the project's last
/// (policy, verdict, range and evidence) is that decision: its id, no new row.
Id record_decision(Database& db, const std::string& project, Id project_policy_id, const std::string& verdict,
                   const std::string& first_commit, const std::string& last_commit, const std::string& evidence_json);
std::int64_t count_decisions(Database& db, const std::string& project);
/// Whether an evaluation of the policy of this content hash finished: its
/// network was loaded from these very bytes and answered a compiler.
bool policy_was_evaluated(Database& db, const std::string& content_hash);

struct DecisionRow {
  Id id = 0;
  std::string created_at;  ///< ISO 8601 UTC, "2026-01-31T12:00:00Z"
  std::string verdict, first_commit, last_commit;
  std::string evidence_json = "{}";
};
/// The project's recorded decisions, newest first (read-only).
std::vector<DecisionRow> list_decisions(Database& db, const std::string& project);

}  // namespace db
