#include "db/policies.h"

#include "db/alert_transitions.h"
#include "db/connection_impl.h"

namespace db {

namespace {

const char* kLineageColumns =
    "SELECT l.id, l.project, p.name, p.content_hash, COALESCE(l.parent_id, 0), l.file, l.trained_commit, "
    "  l.suites::text, l.figures::text, l.state, l.reason, "
    "  to_char(l.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), "
    "  to_char(l.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') "
    "FROM project_policies l JOIN policies p ON p.id = l.policy_id ";

LineageRow lineage_row(const pqxx::row& r) {
  LineageRow l;
  l.id = r[0].as<Id>();
  l.project = r[1].as<std::string>();
  l.name = r[2].as<std::string>();
  l.content_hash = r[3].as<std::string>();
  l.parent_id = r[4].as<Id>();
  l.file = r[5].as<std::string>();
  l.trained_commit = r[6].as<std::string>();
  l.suites_json = r[7].as<std::string>();
  l.figures_json = r[8].as<std::string>();
  l.state = r[9].as<std::string>();
  l.reason = r[10].as<std::string>();
  l.created_at = r[11].as<std::string>();
  l.updated_at = r[12].as<std::string>();
  return l;
}

template <class... Args>
std::optional<LineageRow> one_row(Database& db, const std::string& where, Args&&... args) {
  return db.impl().guarded("reading the policy lineage", [&]() -> std::optional<LineageRow> {
    pqxx::read_transaction tx(db.impl().conn);
    auto r = tx.exec_params(std::string(kLineageColumns) + where, std::forward<Args>(args)...);
    if (r.empty()) return std::nullopt;
    return lineage_row(r[0]);
  });
}

/// Taken inside a transaction: promotions of one project queue behind each other.
void lock_promotions(pqxx::work& tx, const std::string& project) {
  tx.exec_params("SELECT pg_advisory_xact_lock(hashtext('driftwatch promote'), hashtext($1))", project);
}

/// The note on alerts closed because their policy stopped being tracked.
constexpr const char* kReplacedNote = "its policy was replaced";

/// Hands the project's tracking from the active lineage row `replaced` to
/// `active`: the replaced policy's open alerts are about a series nobody
/// tracks any more (sweeps never revisit them, and `alerts --exit-code` would
/// fail every night on them), so they close; those `active` had closed so
/// when it was replaced before (a rollback) open again, its drift as it was.
void hand_over_alerts(pqxx::work& tx, const std::string& project, Id replaced, Id active, const std::string& why) {
  std::string note = std::string(kReplacedNote) + " (" + why + ")";
  tx.exec_params(resolving_sql("policy_id = (SELECT policy_id FROM project_policies WHERE id = $3)"), project, note,
                 replaced);
  tx.exec_params(reopening_sql("policy_id = (SELECT policy_id FROM project_policies WHERE id = $4)"), project,
                 "its policy is tracked again (" + why + ")", std::string(kReplacedNote), active);
}

}  // namespace

std::vector<LineageRow> list_lineage(Database& db, const std::string& project) {
  return db.impl().guarded("reading the policy lineage", [&] {
    pqxx::read_transaction tx(db.impl().conn);
    std::vector<LineageRow> out;
    for (const auto& r : tx.exec_params(std::string(kLineageColumns) + "WHERE l.project = $1 ORDER BY l.id", project))
      out.push_back(lineage_row(r));
    return out;
  });
}

std::optional<LineageRow> find_lineage(Database& db, const std::string& project, Id id) {
  return one_row(db, "WHERE l.project = $1 AND l.id = $2", project, id);
}

std::optional<LineageRow> active_policy(Database& db, const std::string& project) {
  return one_row(db, "WHERE l.project = $1 AND l.state = 'active'", project);
}

std::optional<LineageRow> lineage_of(Database& db, const std::string& project, const std::string& content_hash) {
  return one_row(db, "WHERE l.project = $1 AND p.content_hash = $2", project, content_hash);
}

Id add_to_lineage(Database& db, const LineageRow& row, const std::string& metadata_json) {
  return db.impl().guarded("recording a policy of the lineage", [&] {
    pqxx::work tx(db.impl().conn);
    if (row.state == "active") lock_promotions(tx, row.project);
    auto policy_id = tx.exec_params1(
                           "INSERT INTO policies (name, content_hash, trained_commit, metadata) "
                           "VALUES ($1, $2, $3, $4::jsonb) "
                           "ON CONFLICT (content_hash) DO UPDATE SET name = EXCLUDED.name RETURNING id",
                           row.name, row.content_hash, row.trained_commit, metadata_json)[0]
                         .as<Id>();
    if (row.parent_id != 0)
      tx.exec_params(
          "UPDATE policies SET parent_id = (SELECT policy_id FROM project_policies WHERE id = $2) "
          "WHERE id = $1 AND parent_id IS NULL",
          policy_id, row.parent_id);
    auto id = tx.exec_params1(
                    "INSERT INTO project_policies (project, policy_id, parent_id, file, trained_commit, suites, "
                    "  figures, state, reason) "
                    "VALUES ($1, $2, NULLIF($3, 0), $4, $5, $6::jsonb, $7::jsonb, $8, $9) "
                    "ON CONFLICT (project, policy_id) DO UPDATE SET figures = EXCLUDED.figures, "
                    "  suites = EXCLUDED.suites, reason = EXCLUDED.reason, updated_at = now() "
                    "RETURNING id",
                    row.project, policy_id, row.parent_id, row.file, row.trained_commit, row.suites_json,
                    row.figures_json, row.state == "active" ? "candidate" : row.state, row.reason)[0]
                  .as<Id>();
    if (row.state == "active") {  // the project file names a new policy: it replaces the active one
      auto was = tx.exec_params(
          "UPDATE project_policies SET state = 'retired', updated_at = now() "
          "WHERE project = $1 AND state = 'active' AND id <> $2 RETURNING id",
          row.project, id);
      tx.exec_params("UPDATE project_policies SET state = 'active', updated_at = now() WHERE id = $1", id);
      for (const auto& r : was) hand_over_alerts(tx, row.project, r[0].as<Id>(), id, "the project file names another");
    }
    tx.commit();
    return id;
  });
}

std::vector<Id> abandon_unjudged_candidates(Database& db, const std::string& project, Id keep) {
  return db.impl().guarded("rejecting candidates a cut-short retrain left", [&] {
    pqxx::work tx(db.impl().conn);
    std::vector<Id> ids;
    for (const auto& r : tx.exec_params(
             "UPDATE project_policies SET state = 'rejected', updated_at = now(), reason = $4 "
             "WHERE project = $1 AND state = 'candidate' AND reason = $2 AND id <> $3 RETURNING id",
             project, kBeingEvaluated, keep,
             std::string(kAbandonedReason) + ": the retrain judging it was cut short, and a later one trained another"))
      ids.push_back(r[0].as<Id>());
    tx.commit();
    return ids;
  });
}

void set_lineage_state(Database& db, Id id, const std::string& state, const std::string& figures_json,
                       const std::string& reason) {
  db.impl().guarded("recording a candidate's verdict", [&] {
    pqxx::work tx(db.impl().conn);
    tx.exec_params(
        "UPDATE project_policies SET state = $2, figures = $3::jsonb, reason = $4, updated_at = now() "
        "WHERE id = $1 AND state <> 'active'",
        id, state, figures_json, common::valid_utf8(reason));  // it may quote a compiler's bytes
    tx.commit();
  });
}

bool promote(Database& db, const std::string& project, Id id, Id expected_active, const std::string& reason,
             const std::string& alert_note) {
  return db.impl().guarded("promoting a policy", [&] {
    pqxx::work tx(db.impl().conn);
    lock_promotions(tx, project);
    auto current = tx.exec_params("SELECT id FROM project_policies WHERE project = $1 AND state = 'active'", project);
    Id now_active = current.empty() ? 0 : current[0][0].as<Id>();
    if (now_active != expected_active) return false;
    if (now_active == id) return true;
    tx.exec_params("UPDATE project_policies SET state = 'retired', updated_at = now() WHERE id = $1", now_active);
    auto r = tx.exec_params(
        "UPDATE project_policies SET state = 'active', reason = $3, updated_at = now() "
        "WHERE id = $1 AND project = $2",
        id, project, reason);
    if (r.affected_rows() != 1) return false;  // not this project's: the transaction is rolled back
    hand_over_alerts(tx, project, now_active, id, alert_note.empty() ? reason : alert_note);
    tx.commit();
    return true;
  });
}

Id record_decision(Database& db, const std::string& project, Id project_policy_id, const std::string& verdict,
                   const std::string& first_commit, const std::string& last_commit, const std::string& evidence_json) {
  return db.impl().guarded("recording a retraining decision", [&] {
    pqxx::work tx(db.impl().conn);
    // The same decision as the project's last (asked again, `decide --json`
    // after `decide`): the same row, not a second one in the report's
    // history. Not after the lineage moved since (a retrain judged, a
    // promotion, a rollback): asked again then, it is news. One at a time.
    tx.exec_params("SELECT pg_advisory_xact_lock(hashtext('driftwatch decision'), hashtext($1))", project);
    auto same = tx.exec_params(
        "SELECT id FROM (SELECT * FROM retraining_decisions WHERE project = $1 ORDER BY id DESC LIMIT 1) last "
        "WHERE project_policy_id IS NOT DISTINCT FROM NULLIF($2, 0) AND verdict = $3 AND first_commit = $4 "
        "AND last_commit = $5 AND evidence - 'decision_id' = $6::jsonb - 'decision_id' "
        "AND NOT EXISTS (SELECT 1 FROM project_policies pp WHERE pp.project = $1 "
        "  AND greatest(pp.created_at, pp.updated_at) >= last.created_at)",
        project, project_policy_id, verdict, first_commit, last_commit, evidence_json);
    if (!same.empty()) return same[0][0].as<Id>();
    auto id = tx.exec_params1(
                    "INSERT INTO retraining_decisions (project, project_policy_id, verdict, first_commit, "
                    "  last_commit, evidence) VALUES ($1, NULLIF($2, 0), $3, $4, $5, $6::jsonb) RETURNING id",
                    project, project_policy_id, verdict, first_commit, last_commit, evidence_json)[0]
                  .as<Id>();
    // The evidence names its own decision, as `decide --json` prints it.
    tx.exec_params0(
        "UPDATE retraining_decisions SET evidence = jsonb_set(evidence, '{decision_id}', to_jsonb(id)) WHERE id = $1",
        id);
    tx.commit();
    return id;
  });
}

std::int64_t count_decisions(Database& db, const std::string& project) {
  return db.impl().guarded("counting retraining decisions", [&] {
    pqxx::read_transaction tx(db.impl().conn);
    return tx.exec_params1("SELECT count(*) FROM retraining_decisions WHERE project = $1", project)[0]
        .as<std::int64_t>();
  });
}

bool policy_was_evaluated(Database& db, const std::string& content_hash) {
  return db.impl().guarded("looking up the policy's evaluations", [&] {
    pqxx::read_transaction tx(db.impl().conn);
    return tx
        .exec_params1(
            "SELECT EXISTS (SELECT 1 FROM evaluations e JOIN policies p ON p.id = e.policy_id "
            "WHERE p.content_hash = $1 AND e.status = 'done')",
            content_hash)[0]
        .as<bool>();
  });
}

std::vector<DecisionRow> list_decisions(Database& db, const std::string& project) {
  return db.impl().guarded("listing retraining decisions", [&] {
    pqxx::read_transaction tx(db.impl().conn);
    std::vector<DecisionRow> out;
    for (const auto& r :
         tx.exec_params("SELECT id, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), verdict, "
                        "first_commit, "
                        "  last_commit, evidence::text FROM retraining_decisions WHERE project = $1 ORDER BY id DESC",
                        project))
      out.push_back({r[0].as<Id>(), r[1].as<std::string>(), r[2].as<std::string>(), r[3].as<std::string>(),
                     r[4].as<std::string>(), r[5].as<std::string>()});
    return out;
  });
}

}  // namespace db
