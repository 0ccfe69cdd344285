#include "db/evaluation_reuse.h"

#include "db/connection_impl.h"

namespace db {

std::optional<ReusableEvaluation> find_reusable_evaluation(Database& db, Id policy_id, Id suite_id,
                                                           const std::string& key, Id current,
                                                           const MachineFailureRule& machine) {
  return db.impl().guarded("looking for an evaluation of an identical compiler", [&] {
    // One snapshot: a rerun of the source replacing its rows meanwhile is not seen half-way.
    pqxx::transaction<pqxx::isolation_level::repeatable_read, pqxx::readwrite_policy::read_only> tx(db.impl().conn);
    auto found = tx.exec_params(
        "SELECT e.id, c.sha, e.summary::text, coalesce(e.compat_report::text, '{}'), c.subject FROM evaluations e "
        "JOIN builds b ON b.id = e.build_id JOIN commits c ON c.id = b.commit_id "
        "WHERE e.policy_id = $1 AND e.suite_id = $2 AND e.status = 'done' "
        "AND e.summary->>'reuse_key' = $3 "
        // A link group that failed may have failed by the machine (the
        // linker timed out or was killed under load, or is not installed on
        // this host), and the linker is not in the key: such a result is
        // measured again rather than kept or copied.
        "AND NOT COALESCE(e.summary->'linked'->'groups' @> '[{\"ok\": false}]'::jsonb, false) "
        // Outcomes of the machine, not of the compiler and the module (a
        // timeout under load, a compile SIGKILLed by the OOM killer, a broken
        // FIFO, driftwatch's own failure) are never copied to another check-in.
        // One that failed so again when compiled alone is the compiler's.
        "AND NOT EXISTS (SELECT 1 FROM module_results r WHERE r.evaluation_id = e.id "
        "  AND ($8 = '' OR NOT starts_with(r.message, $8)) "
        "  AND (r.outcome = ANY (string_to_array($5, ',')) OR (r.outcome = $6 AND EXISTS (SELECT 1 FROM "
        "    unnest(string_to_array($7, E'\\x1f')) m WHERE strpos(r.message, m) > 0)))) "
        // The row being measured again comes first: a check-in queued again
        // (its repository moved, a requeued job) keeps what it measured.
        "ORDER BY e.id <> $4, (e.summary ? 'reused_from'), e.id LIMIT 1",
        policy_id, suite_id, key, current, machine.outcomes, machine.crashed, machine.crash_markers_param(),
        machine.failed_again_alone);
    std::optional<ReusableEvaluation> out;
    if (found.empty()) return out;
    out.emplace();
    out->evaluation_id = found[0][0].as<Id>();
    out->commit = found[0][1].as<std::string>();
    out->summary_json = found[0][2].as<std::string>();
    out->compat_json = found[0][3].as<std::string>();
    out->subject = found[0][4].as<std::string>();
    for (const auto& r : tx.exec_params(
             "SELECT benchmark_id, heuristic, outcome, message FROM module_results WHERE evaluation_id = $1 "
             "ORDER BY benchmark_id, heuristic",
             out->evaluation_id))
      out->results.push_back({r[0].as<Id>(), r[1].as<std::string>(), r[2].as<std::string>(), r[3].as<std::string>()});
    for (const auto& r : tx.exec_params(
             "SELECT benchmark_id, heuristic, metric, value FROM measurements WHERE evaluation_id = $1 "
             "ORDER BY benchmark_id, heuristic, metric",
             out->evaluation_id))
      out->measurements.push_back({r[0].as<Id>(), r[1].as<std::string>(), r[2].as<std::string>(), r[3].as<double>()});
    tx.commit();
    return out;
  });
}

}  // namespace db
