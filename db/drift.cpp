#include "db/drift.h"

#include <algorithm>
#include <map>

#include "common/text.h"
#include "db/alert_transitions.h"
#include "db/connection_impl.h"

namespace db {

namespace {

// The policy and suite rows named by content: the analysis knows hashes.
constexpr const char* kPolicyId = "(SELECT id FROM policies WHERE content_hash = $2)";
constexpr const char* kSuiteId = "(SELECT id FROM suites WHERE manifest_hash = $3 ORDER BY id DESC LIMIT 1)";

}  // namespace

// A learned compile of `r` (a module_results alias) the machine may have
// failed: timed out (under load, or too many to try again alone) or killed
// or out of memory, and not failed so again alone. Only with a machine rule
// ($5, $6, $7): without one, nothing is.
#define LEARNED_MACHINE_FAILURE(r)                                                                        \
  "($5 <> '' AND NOT ($7 <> '' AND starts_with(" r ".message, $7)) AND (" r ".outcome = 'timeout' OR (" r \
  ".outcome = $5 AND EXISTS (SELECT 1 FROM unnest(string_to_array($6, E'\\x1f')) mk "                     \
  "WHERE strpos(" r ".message, mk) > 0))))"

std::vector<SeriesPoint> load_series(Database& db, Id repository_id, const std::string& recipe_hash,
                                     const std::string& policy_hash, const std::string& suite_hash,
                                     const MachineFailureRule* machine) {
  return db.impl().guarded("reading the series", [&] {
    // One snapshot for its two statements: an evaluation measured again and
    // stored meanwhile must not give one point the old summary and new sizes.
    pqxx::transaction<pqxx::isolation_level::repeatable_read, pqxx::readwrite_policy::read_only> tx(db.impl().conn);
    std::vector<SeriesPoint> out;
    std::map<Id, std::size_t> by_eval;
    auto rows = tx.exec_params(
        "SELECT c.id, c.sha, c.author, c.subject, extract(epoch FROM c.committed_at)::bigint, b.outcome, "
        "  e.id, COALESCE(e.summary::text, '{}'), COALESCE(e.compat_report::text, '{}'), "
        "  COALESCE((e.summary->'summary'->>'uplift')::float8, 0), "
        "  COALESCE((e.summary->'summary'->>'total_uplift')::float8, 0), "
        "  COALESCE((e.summary->'summary'->>'total_default')::bigint, 0), "
        "  COALESCE((e.summary->'summary'->>'total_learned')::bigint, 0), "
        "  COALESCE((e.summary->'summary'->>'wins')::int, 0), COALESCE((e.summary->'summary'->>'ties')::int, 0), "
        "  COALESCE((e.summary->'summary'->>'losses')::int, 0), "
        "  lf.error, "
        // Modules the default compiled and the policy's compile failed on.
        "  (SELECT string_agg(bf.name, E'\\n' ORDER BY bf.name) FROM module_results l "
        "   JOIN module_results d ON d.evaluation_id = l.evaluation_id "
        "     AND d.benchmark_id = l.benchmark_id AND d.heuristic = 'default' AND d.outcome = 'ok' "
        "   JOIN benchmarks bf ON bf.id = l.benchmark_id "
        "   WHERE l.evaluation_id = e.id AND l.heuristic = 'learned' "
        // As ModuleResult::learned_failed: what failed outside the compiler
        // (driftwatch, the disk) is not the policy's loss.
        "     AND l.outcome NOT IN ('ok', 'policy-not-consulted', 'internal-error', 'object-unreadable') "
        // Nor what the machine may have failed (a timeout under load, a
        // compile killed or out of memory) unless it failed so again alone:
        // one module is enough for an alert (learned_unsure, below).
        "     AND NOT " LEARNED_MACHINE_FAILURE("l") "), "
        "  COALESCE(lf.compiler_broken, false), "
        "  (SELECT sum(m.value)::bigint FROM measurements m WHERE m.evaluation_id = e.id "
        "     AND m.heuristic = 'learned' AND m.metric = 'decisions'), "
        // Modules the compiler itself failed: crashed on, not as the
        // machine's crashes (killed, out of memory), which load may cause;
        // or failed so again when compiled alone (a hang), the load gone.
        "  (SELECT string_agg(bd.name, E'\\n' ORDER BY bd.name) FROM module_results d "
        "   JOIN benchmarks bd ON bd.id = d.benchmark_id "
        "   WHERE d.evaluation_id = e.id AND d.heuristic = 'default' AND d.outcome <> 'ok' "
        "     AND (($7 <> '' AND starts_with(d.message, $7)) OR (d.outcome = $5 "
        "     AND NOT EXISTS (SELECT 1 FROM unnest(string_to_array($6, E'\\x1f')) m "
        "       WHERE strpos(d.message, m) > 0)))), "
        // Modules whose default timed out and was not found hanging alone:
        // the load's, or stored before hangs were told apart.
        "  (SELECT string_agg(bu.name, E'\\n' ORDER BY bu.name) FROM module_results u "
        "   JOIN benchmarks bu ON bu.id = u.benchmark_id "
        "   WHERE u.evaluation_id = e.id AND u.heuristic = 'default' AND u.outcome = 'timeout' "
        "     AND ($7 = '' OR NOT starts_with(u.message, $7))), "
        // Modules the default compiled and whose learned compile never
        // asked the policy (the ML channel never opened), while others did.
        "  (SELECT string_agg(bn.name, E'\\n' ORDER BY bn.name) FROM module_results n "
        "   JOIN module_results d ON d.evaluation_id = n.evaluation_id "
        "     AND d.benchmark_id = n.benchmark_id AND d.heuristic = 'default' AND d.outcome = 'ok' "
        "   JOIN benchmarks bn ON bn.id = n.benchmark_id "
        "   WHERE n.evaluation_id = e.id AND n.heuristic = 'learned' AND n.outcome = 'policy-not-consulted'), "
        // Modules the default compiled and whose learned compile the machine may have failed.
        "  (SELECT string_agg(bm.name, E'\\n' ORDER BY bm.name) FROM module_results m "
        "   JOIN module_results d ON d.evaluation_id = m.evaluation_id "
        "     AND d.benchmark_id = m.benchmark_id AND d.heuristic = 'default' AND d.outcome = 'ok' "
        "   JOIN benchmarks bm ON bm.id = m.benchmark_id "
        "   WHERE m.evaluation_id = e.id AND m.heuristic = 'learned' AND " LEARNED_MACHINE_FAILURE("m") ") "
        "FROM builds b JOIN commits c ON c.id = b.commit_id "
        "JOIN recipes rc ON rc.id = b.recipe_id "
        // The newest failed evaluation: why, and whether the compiler itself compiled nothing.
        "LEFT JOIN LATERAL (SELECT COALESCE(f.summary->>'error', 'no reason recorded') AS error, "
        "    COALESCE((f.summary->>'compiler_broken')::boolean, false) AS compiler_broken FROM evaluations f "
        "  WHERE f.build_id = b.id AND f.status = 'failed' "
        "    AND f.policy_id = (SELECT id FROM policies WHERE content_hash = $3) "
        "    AND f.suite_id IN (SELECT id FROM suites WHERE manifest_hash = $4) ORDER BY f.id DESC LIMIT 1) lf ON true "
        "LEFT JOIN evaluations e ON e.build_id = b.id AND e.status = 'done' "
        "  AND e.policy_id = (SELECT id FROM policies WHERE content_hash = $3) "
        "  AND e.suite_id IN (SELECT id FROM suites WHERE manifest_hash = $4) "
        "WHERE c.repository_id = $1 AND rc.content_hash = $2",
        repository_id, recipe_hash, policy_hash, suite_hash, machine ? machine->crashed : std::string(),
        machine ? machine->crash_markers_param() : std::string(),
        machine ? machine->failed_again_alone : std::string());
    for (const auto& r : rows) {
      SeriesPoint p;
      p.commit_id = r[0].as<Id>();
      p.sha = r[1].as<std::string>();
      p.author = r[2].as<std::string>();
      p.subject = r[3].as<std::string>();
      p.time = r[4].as<std::int64_t>();
      p.build_outcome = r[5].as<std::string>();
      p.evaluated = !r[6].is_null();
      p.compat_json = r[8].as<std::string>();
      p.uplift = r[9].as<double>();
      p.total_uplift = r[10].as<double>();
      p.total_default = r[11].as<std::int64_t>();
      p.total_learned = r[12].as<std::int64_t>();
      p.wins = r[13].as<int>();
      p.ties = r[14].as<int>();
      p.losses = r[15].as<int>();
      // A compiler that compiled nothing even without the policy is a check-in
      // that gave no usable compiler, not one the policy cannot run on.
      if (!p.evaluated && r[18].as<bool>() && p.build_outcome == "ok") p.build_outcome = kCompilerBroken;
      else if (!p.evaluated && !r[16].is_null()) p.evaluation_error = r[16].as<std::string>();
      if (!r[17].is_null()) p.learned_failing = common::split(r[17].as<std::string>(), '\n');
      if (!r[19].is_null()) p.learned_decisions = r[19].as<std::int64_t>();
      if (!r[20].is_null()) p.default_failing = common::split(r[20].as<std::string>(), '\n');
      std::sort(p.learned_failing.begin(), p.learned_failing.end());  // byte order, whatever the collation
      std::sort(p.default_failing.begin(), p.default_failing.end());
      if (!r[21].is_null()) p.default_unsure = common::split(r[21].as<std::string>(), '\n');
      std::sort(p.default_unsure.begin(), p.default_unsure.end());
      if (!r[22].is_null()) p.learned_unasked = common::split(r[22].as<std::string>(), '\n');
      std::sort(p.learned_unasked.begin(), p.learned_unasked.end());
      if (!r[23].is_null()) p.learned_unsure = common::split(r[23].as<std::string>(), '\n');
      std::sort(p.learned_unsure.begin(), p.learned_unsure.end());
      if (p.evaluated) by_eval[r[6].as<Id>()] = out.size();
      out.push_back(std::move(p));
    }
    if (by_eval.empty()) return out;
    std::string ids;
    for (const auto& [id, i] : by_eval) ids += (ids.empty() ? "" : ",") + std::to_string(id);
    // Per module .text under both heuristics, where both compiled.
    auto modules = tx.exec_params(
        "SELECT d.evaluation_id, bm.name, d.value::bigint, l.value::bigint "
        "FROM measurements d JOIN measurements l ON l.evaluation_id = d.evaluation_id "
        "  AND l.benchmark_id = d.benchmark_id AND l.metric = d.metric AND l.heuristic = 'learned' "
        "JOIN benchmarks bm ON bm.id = d.benchmark_id "
        "WHERE d.evaluation_id = ANY (string_to_array($1, ',')::bigint[]) AND d.heuristic = 'default' "
        "  AND d.metric = 'text_bytes' ORDER BY bm.name",
        ids);
    for (const auto& r : modules)
      out[by_eval.at(r[0].as<Id>())].modules.push_back(
          {r[1].as<std::string>(), r[2].as<std::int64_t>(), r[3].as<std::int64_t>()});
    // Byte order, whatever the database's collation: looked up by name.
    for (auto& p : out)
      std::sort(p.modules.begin(), p.modules.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    return out;
  });
}

#undef LEARNED_MACHINE_FAILURE

bool open_alert(Database& db, const AlertRow& a) {
  return db.impl().guarded("opening an alert", [&] {
    pqxx::work tx(db.impl().conn);
    // Opened before alerts had a recipe, and found again: it is this alert.
    if (!a.legacy_fingerprint.empty())
      tx.exec_params(
          "UPDATE alerts SET fingerprint = $1, recipe_id = (SELECT id FROM recipes WHERE content_hash = $2) "
          "WHERE fingerprint = $3 AND recipe_id IS NULL AND project = $4 "
          "  AND NOT EXISTS (SELECT 1 FROM alerts WHERE fingerprint = $1)",
          a.fingerprint, a.recipe_hash, a.legacy_fingerprint, a.project);
    auto r = tx.exec_params(
        std::string("INSERT INTO alerts (fingerprint, policy_id, suite_id, metric, project, kind, details, "
                    "last_good_commit_id, first_bad_commit_id, culprit_commit_id, range_first_commit_id, magnitude, "
                    "notify_state, recipe_id) SELECT $1, ") +
            kPolicyId + ", " + kSuiteId +
            ", $4, $5, $6, $7::jsonb, NULLIF($8, 0), NULLIF($9, 0), NULLIF($10, 0), NULLIF($11, 0), $12, $13, "
            "(SELECT id FROM recipes WHERE content_hash = $14) "
            // A policy replaced while the sweep ran (a promotion) gets no new
            // alerts: its old ones were closed with it, and nobody tracks it.
            // A policy the project file names anew is not in the lineage yet
            // (`decide` records it): its alerts are opened, not lost.
            "WHERE NOT EXISTS (SELECT 1 FROM project_policies pp WHERE pp.project = $5 AND pp.state <> 'active' "
            "  AND pp.policy_id = " +
            kPolicyId +
            ") "
            // The same change driftwatch closed because the toolchains'
            // line no longer showed it (a nightly taken off the list, then
            // back), or a slow drift no longer told over the samples (a grid
            // edited, then back): found again, it is open again and delivered
            // again. So does a failure resolved as over (a build fixed)
            // that a later analysis, on changed data (an evaluation
            // re-run, a suite rebuilt), finds no end to. Any other driftwatch
            // closed (a series that ended, a change before the training
            // check-in) stays closed, and so does one a person resolved or
            // ignored.
            "ON CONFLICT (fingerprint) DO UPDATE SET state = 'open', state_by = 'driftwatch', "
            "  note = 'found again', details = EXCLUDED.details, last_good_commit_id = EXCLUDED.last_good_commit_id, "
            "  first_bad_commit_id = EXCLUDED.first_bad_commit_id, culprit_commit_id = EXCLUDED.culprit_commit_id, "
            "  range_first_commit_id = EXCLUDED.range_first_commit_id, magnitude = EXCLUDED.magnitude, "
            "  notify_state = EXCLUDED.notify_state, notify_attempts = 0, notify_error = '', hook_sent = false, "
            "  webhook_sent = false, updated_at = now(), resolution_notify_state = 'none', "
            "  resolution_notify_attempts = 0, resolution_notify_error = '', resolution_hook_sent = false, "
            // Reopened after a told end (a recovered note), it is news of its
            // own: told afresh, doubted by nobody. Reopened after driftwatch
            // closed it untold (left the line, retold), those who had its
            // opening still wait for its end, and a person's doubt holds.
            "  resolution_webhook_sent = false, "
            "  end_doubted = alerts.end_doubted AND NOT starts_with(alerts.note, $17), "
            "  hook_told = alerts.hook_told AND NOT starts_with(alerts.note, $17), "
            "  webhook_told = alerts.webhook_told AND NOT starts_with(alerts.note, $17) "
            "  WHERE alerts.state = 'resolved' AND alerts.state_by = 'driftwatch' AND (alerts.note IN ($15, $16, $19) "
            "    OR (starts_with(alerts.note, $17) AND NOT $18)) "
            "RETURNING id, xmax <> 0",
        a.fingerprint, a.policy_hash, a.suite_manifest_hash, a.metric, a.project, a.kind, a.details_json,
        a.last_good_commit_id, a.first_bad_commit_id, a.culprit_commit_id, a.range_first_commit_id, a.magnitude,
        a.notify ? "pending" : "none", a.recipe_hash, kLeftTheLineNote, kDriftRetoldNote, kRecoveredNotePrefix,
        a.recovered, kHistoryRewrittenNote);
    if (!r.empty())  // xmax <> 0: the row was updated, not inserted
      tx.exec_params("INSERT INTO alert_events (alert_id, state, who, note) VALUES ($1, 'open', 'driftwatch', $2)",
                     r[0][0].as<Id>(), r[0][1].as<bool>() ? "found again" : "");
    tx.commit();
    return !r.empty();
  });
}

bool narrow_alert(Database& db, Id id, const AlertRow& a, const std::string& note) {
  return db.impl().guarded("narrowing an alert", [&] {
    pqxx::work tx(db.impl().conn);
    // Another alert may already carry the narrower fingerprint: then this one stays as it is.
    auto r = tx.exec_params(
        "UPDATE alerts SET fingerprint = $2, details = $3::jsonb, last_good_commit_id = NULLIF($4, 0), "
        "first_bad_commit_id = NULLIF($5, 0), culprit_commit_id = NULLIF($6, 0), range_first_commit_id = NULLIF($7, "
        "0), "
        "magnitude = $8, updated_at = now(), recipe_id = COALESCE(recipe_id, (SELECT id FROM recipes WHERE "
        "content_hash = $9)), "
        // Told again with the narrower pin, where it is delivered at all, unless a person dismissed it.
        "notify_state = CASE WHEN notify_state = 'none' THEN 'none' WHEN state IN ('ignored', 'resolved') THEN "
        "notify_state "
        "ELSE 'pending' END, hook_sent = false, "
        // A new delivery: its failed attempts count from here (sweep/notify.h).
        "webhook_sent = false, notify_attempts = 0 WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM alerts WHERE "
        "fingerprint = $2)",
        id, a.fingerprint, a.details_json, a.last_good_commit_id, a.first_bad_commit_id, a.culprit_commit_id,
        a.range_first_commit_id, a.magnitude, a.recipe_hash);
    if (r.affected_rows() == 0) return false;
    tx.exec_params("INSERT INTO alert_events (alert_id, state, who, note) SELECT id, state, 'driftwatch', $2 "
                   "FROM alerts WHERE id = $1",
                   id, note);
    tx.commit();
    return true;
  });
}

/// The note of a quiet re-pin's event: not an opening (ACTED_ON_SINCE_OPENED).
#define REPINNED_NOTE "its range is now the one a later measurement gives: "

bool repin_alert(Database& db, const AlertRow& a, const std::string& sentence) {
  return db.impl().guarded("re-pinning an alert", [&] {
    pqxx::work tx(db.impl().conn);
    auto r = tx.exec_params(
        "UPDATE alerts SET details = $2::jsonb, last_good_commit_id = NULLIF($3, 0), "
        "first_bad_commit_id = NULLIF($4, 0), culprit_commit_id = NULLIF($5, 0), "
        "range_first_commit_id = NULLIF($6, 0), magnitude = $7, updated_at = now() "
        "WHERE fingerprint = $1 AND state IN ('open', 'acknowledged') AND ("
        "last_good_commit_id IS DISTINCT FROM NULLIF($3, 0) OR first_bad_commit_id IS DISTINCT FROM NULLIF($4, 0) "
        "OR culprit_commit_id IS DISTINCT FROM NULLIF($5, 0) OR range_first_commit_id IS DISTINCT FROM NULLIF($6, 0)) "
        "RETURNING id, state",
        a.fingerprint, a.details_json, a.last_good_commit_id, a.first_bad_commit_id, a.culprit_commit_id,
        a.range_first_commit_id, a.magnitude);
    if (r.empty()) return false;
    tx.exec_params("INSERT INTO alert_events (alert_id, state, who, note) VALUES ($1, $2, 'driftwatch', $3)",
                   r[0][0].as<Id>(), r[0][1].as<std::string>(), REPINNED_NOTE + sentence);
    tx.commit();
    return true;
  });
}

namespace {

/// A person acknowledged, resolved or ignored alert a since driftwatch last
/// opened it (found, found again, narrowed: not a quiet re-pin): a late
/// opening is no longer owed (kOpeningDue), and `alerts show` says so
/// (AlertView::late_opening_theirs).
#define ACTED_ON_SINCE_OPENED                                                                          \
  "EXISTS (SELECT 1 FROM alert_events e WHERE e.alert_id = a.id AND e.who <> 'driftwatch' AND e.id > " \
  "(SELECT COALESCE(max(o.id), 0) FROM alert_events o WHERE o.alert_id = a.id AND o.state = 'open' "   \
  "AND o.who = 'driftwatch' AND NOT starts_with(o.note, '" REPINNED_NOTE "')))"
/// A pending opening of an alert driftwatch found over; where the question
/// decides nothing it is not asked.
#define FOUND_OVER_PENDING "a.notify_state = 'pending' AND a.state = 'resolved' AND a.state_by = 'driftwatch' "

const char* kAlertColumns =
    "SELECT a.id, a.project, a.kind, a.state, a.state_by, a.note, a.fingerprint, COALESCE(s.name, ''), "
    "  COALESCE(p.name, ''), a.metric, COALESCE(cc.sha, ''), COALESCE(cc.subject, ''), COALESCE(cc.author, ''), "
    "  COALESCE(extract(epoch FROM cc.committed_at)::bigint, 0), COALESCE(g.sha, ''), COALESCE(fb.sha, ''), "
    "  COALESCE(rf.sha, ''), a.magnitude, a.details::text, a.notify_state, a.notify_error, a.notify_attempts, "
    "  to_char(a.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), "
    "  to_char(a.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), COALESCE(p.content_hash, ''), "
    "  COALESCE(s.manifest_hash, ''), a.hook_sent, a.webhook_sent, COALESCE(rc.content_hash, ''), "
    "  COALESCE(g.subject, ''), COALESCE(fb.subject, ''), COALESCE(rf.subject, ''), a.resolution_notify_state, "
    "  a.resolution_hook_sent, a.resolution_webhook_sent, a.resolution_notify_attempts, a.resolution_notify_error, "
    "  a.end_doubted, a.hook_told, a.webhook_told, "
    "  CASE WHEN " FOUND_OVER_PENDING " THEN " ACTED_ON_SINCE_OPENED
    " ELSE false END "
    "FROM alerts a LEFT JOIN suites s ON s.id = a.suite_id LEFT JOIN recipes rc ON rc.id = a.recipe_id LEFT JOIN "
    "policies p ON p.id = a.policy_id "
    "LEFT JOIN commits cc ON cc.id = a.culprit_commit_id LEFT JOIN commits g ON g.id = a.last_good_commit_id "
    "LEFT JOIN commits fb ON fb.id = a.first_bad_commit_id LEFT JOIN commits rf ON rf.id = a.range_first_commit_id ";

AlertView alert_view(const pqxx::row& r) {
  AlertView v;
  v.id = r[0].as<Id>();
  v.project = r[1].as<std::string>();
  v.kind = r[2].as<std::string>();
  v.state = r[3].as<std::string>();
  v.state_by = r[4].as<std::string>();
  v.note = r[5].as<std::string>();
  v.fingerprint = r[6].as<std::string>();
  v.suite = r[7].as<std::string>();
  v.policy = r[8].as<std::string>();
  v.metric = r[9].as<std::string>();
  v.culprit_sha = r[10].as<std::string>();
  v.culprit_subject = r[11].as<std::string>();
  v.culprit_author = r[12].as<std::string>();
  v.culprit_time = r[13].as<std::int64_t>();
  v.last_good_sha = r[14].as<std::string>();
  v.first_bad_sha = r[15].as<std::string>();
  v.range_first_sha = r[16].as<std::string>();
  v.magnitude = r[17].as<double>();
  v.details_json = r[18].as<std::string>();
  v.notify_state = r[19].as<std::string>();
  v.notify_error = r[20].as<std::string>();
  v.notify_attempts = r[21].as<int>();
  v.created_at = r[22].as<std::string>();
  v.updated_at = r[23].as<std::string>();
  v.policy_hash = r[24].as<std::string>();
  v.suite_manifest_hash = r[25].as<std::string>();
  v.hook_sent = r[26].as<bool>();
  v.webhook_sent = r[27].as<bool>();
  v.recipe_hash = r[28].as<std::string>();
  v.last_good_subject = r[29].as<std::string>();
  v.first_bad_subject = r[30].as<std::string>();
  v.range_first_subject = r[31].as<std::string>();
  v.resolution_notify_state = r[32].as<std::string>();
  v.resolution_hook_sent = r[33].as<bool>();
  v.resolution_webhook_sent = r[34].as<bool>();
  v.resolution_notify_attempts = r[35].as<int>();
  v.resolution_notify_error = r[36].as<std::string>();
  v.end_doubted = r[37].as<bool>();
  v.hook_told = r[38].as<bool>();
  v.webhook_told = r[39].as<bool>();
  v.late_opening_theirs = r[40].as<bool>();
  return v;
}

}  // namespace

std::vector<AlertView> list_alerts(Database& db, const std::string& project, const std::vector<std::string>& states) {
  std::string list;
  for (const auto& s : states) list += (list.empty() ? "" : ",") + s;
  return db.impl().guarded("listing alerts", [&] {
    pqxx::read_transaction tx(db.impl().conn);
    std::vector<AlertView> out;
    for (const auto& r :
         tx.exec_params(std::string(kAlertColumns) +
                            "WHERE ($1 = '' OR a.project = $1) AND ($2 = '' OR a.state = ANY (string_to_array($2, ','))) "
                            "ORDER BY a.id DESC",
                        project, list))
      out.push_back(alert_view(r));
    return out;
  });
}

std::optional<AlertView> find_alert(Database& db, const std::string& project, Id id) {
  return db.impl().guarded("reading an alert", [&]() -> std::optional<AlertView> {
    pqxx::read_transaction tx(db.impl().conn);
    auto r = tx.exec_params(std::string(kAlertColumns) + "WHERE a.id = $1 AND a.project = $2", id, project);
    if (r.empty()) return std::nullopt;
    return alert_view(r[0]);
  });
}

int resolve_alerts_of_rebuilt_suite(Database& db, const std::string& project, const std::string& name,
                                    const std::string& manifest_hash) {
  return db.impl().guarded("resolving a rebuilt suite's alerts", [&] {
    pqxx::work tx(db.impl().conn);
    auto note = "its suite " + name + " was rebuilt (now " + manifest_hash.substr(0, 12) + "): a new series";
    auto r = tx.exec_params(resolving_sql("suite_id IN (SELECT id FROM suites WHERE name = $3 AND manifest_hash <> $4)"),
                            project, note, name, manifest_hash);
    tx.commit();
    return static_cast<int>(r.size());
  });
}

namespace {

/// The project's alerts found on another `table` row (recipes, policies)
/// than the one of `hash` are resolved with `note`, whose start is
/// `prefix`; those of `hash` that driftwatch resolved so are reopened.
/// Returns how many were resolved.
int follow_hash(pqxx::work& tx, const std::string& project, const std::string& column, const std::string& table,
                const std::string& hash, const std::string& prefix, const std::string& note,
                const std::string& reopened_note) {
  auto r = tx.exec_params(resolving_sql(column + " IN (SELECT id FROM " + table + " WHERE content_hash <> $3)"), project,
                          note, hash);
  tx.exec_params(reopening_sql(column + " IN (SELECT id FROM " + table + " WHERE content_hash = $4)"), project,
                 reopened_note, prefix, hash);
  return static_cast<int>(r.size());
}

}  // namespace

int follow_recipe(Database& db, const std::string& project, const std::string& recipe_hash) {
  return db.impl().guarded("following the project's recipe", [&] {
    pqxx::work tx(db.impl().conn);
    const std::string changed = "the project's recipe changed";
    int resolved = follow_hash(tx, project, "recipe_id", "recipes", recipe_hash, changed,
                               changed + " (now " + recipe_hash.substr(0, 12) + "): its builds are a new series",
                               "its recipe is the project's again");
    tx.commit();
    return resolved;
  });
}

int follow_policy(Database& db, const std::string& project, const std::string& policy_hash) {
  return db.impl().guarded("following the project's policy", [&] {
    pqxx::work tx(db.impl().conn);
    // A policy the lineage replaced while the sweep ran (a promotion, a
    // rollback): the lineage handed its alerts over already, and following
    // it here would hand them back (as open_alert opens none of its).
    auto superseded = tx.exec_params(
        "SELECT 1 FROM project_policies pp JOIN policies po ON po.id = pp.policy_id WHERE pp.project = $1 "
        "  AND po.content_hash = $2 GROUP BY po.id HAVING bool_and(pp.state <> 'active')",
        project, policy_hash);
    if (!superseded.empty()) return 0;
    // The lineage's own words (db/policies.cpp): a rollback reopens these too.
    const std::string replaced = "its policy was replaced";
    int resolved = follow_hash(tx, project, "policy_id", "policies", policy_hash, replaced,
                               replaced + " (the project's is now " + policy_hash.substr(0, 12) + ")",
                               "its policy is the project's again");
    tx.commit();
    return resolved;
  });
}

int follow_suites(Database& db, const std::string& project,
                  const std::vector<std::pair<std::string, std::string>>& suites) {
  // Suite names are directory names: no unit separator in them.
  std::string names, hashes;
  for (const auto& [name, hash] : suites) {
    names += (names.empty() ? "" : "\x1f") + name;
    hashes += (hashes.empty() ? "" : "\x1f") + hash;
  }
  return db.impl().guarded("following the project's suites", [&] {
    pqxx::work tx(db.impl().conn);
    const std::string dropped = "its suite is no longer the project's";
    auto r = tx.exec_params(
        resolving_sql("suite_id IN (SELECT id FROM suites WHERE name <> ALL (string_to_array($3, E'\\x1f')))"),
        project, dropped, names);
    tx.exec_params(reopening_sql("suite_id IN (SELECT id FROM suites WHERE (name, manifest_hash) IN (SELECT * FROM "
                                 "unnest(string_to_array($4, E'\\x1f'), string_to_array($5, E'\\x1f'))))"),
                   project, "its suite is the project's again", dropped, names, hashes);
    tx.commit();
    return static_cast<int>(r.size());
  });
}

namespace {

/// Makes alert $1's end due to the channels its opening reached (the
/// others are marked as having it): a fresh delivery, attempts from 0.
const char* kEndDueSql =
    "UPDATE alerts SET resolution_notify_state = 'pending', resolution_notify_attempts = 0, "
    "resolution_notify_error = '', resolution_hook_sent = NOT hook_told, resolution_webhook_sent = NOT webhook_told "
    "WHERE id = $1 AND (hook_told OR webhook_told)";

}  // namespace

bool set_alert_state(Database& db, const std::string& project, Id id, const std::string& state,
                     const std::string& who_text, const std::string& note_text, const std::string& details) {
  // People's words from a command line: any bytes, stored as valid UTF-8.
  auto who = common::valid_utf8(who_text), note = common::valid_utf8(note_text);
  return db.impl().guarded("changing an alert", [&] {
    pqxx::work tx(db.impl().conn);
    auto was = tx.exec_params("SELECT state, state_by, note FROM alerts WHERE id = $1 AND project = $2 FOR UPDATE", id,
                              project);
    if (was.empty()) return false;
    auto was_state = was[0][0].as<std::string>();
    bool recovered = note.rfind(kRecoveredNotePrefix, 0) == 0;
    // driftwatch resolves what is open or acknowledged: a person who moved
    // the alert since the sweep read it (ignored, resolved it) has the last word.
    if (who == "driftwatch" && state == "resolved" && was_state != "open" && was_state != "acknowledged") return false;
    // A person moving what driftwatch resolved as over out of resolved
    // (reopening it, or ignoring it first) doubts that end.
    bool doubted = who != "driftwatch" && state != "resolved" && was_state == "resolved" &&
                   was[0][1].as<std::string>() == "driftwatch" &&
                   was[0][2].as<std::string>().rfind(kRecoveredNotePrefix, 0) == 0;
    // A doubted end takes where it recovered out of its details too: the
    // alert's sentence would still say it compiles again there.
    tx.exec_params(
        "UPDATE alerts SET state = $2, state_by = $3, note = CASE WHEN $4 = '' THEN note ELSE $4 END, "
        "updated_at = now(), end_doubted = end_doubted OR $5, "
        "details = CASE WHEN $5 THEN details - 'recovered_at' - 'recovered_at_label' - 'recovered_taken' "
        "  ELSE details END || $6::jsonb WHERE id = $1",
        id, state, who, note, doubted, details.empty() ? std::string("{}") : details);
    // Its end is news only where driftwatch saw the failure over and its
    // opening reached someone; any other move leaves no end to tell.
    if (state == "resolved" && who == "driftwatch" && recovered)
      tx.exec_params(kEndDueSql, id);
    else if (state != "resolved")
      tx.exec_params(
          "UPDATE alerts SET resolution_notify_state = 'none', resolution_notify_attempts = 0, "
          "resolution_notify_error = '', resolution_hook_sent = false, resolution_webhook_sent = false WHERE id = $1",
          id);
    tx.exec_params("INSERT INTO alert_events (alert_id, state, who, note) VALUES ($1, $2, $3, $4)", id, state, who,
                   note);
    tx.commit();
    return true;
  });
}

std::vector<AlertEvent> alert_events(Database& db, Id id) {
  return db.impl().guarded("reading alert events", [&] {
    pqxx::read_transaction tx(db.impl().conn);
    std::vector<AlertEvent> out;
    for (const auto& r :
         tx.exec_params("SELECT state, who, note, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
                        " FROM alert_events "
                        "WHERE alert_id = $1 ORDER BY id",
                        id))
      out.push_back({r[0].as<std::string>(), r[1].as<std::string>(), r[2].as<std::string>(), r[3].as<std::string>()});
    return out;
  });
}

std::vector<ModuleFailure> alert_module_failures(Database& db, Id alert_id, const std::string& heuristic) {
  return db.impl().guarded("reading an alert's failed compiles", [&] {
    pqxx::read_transaction tx(db.impl().conn);
    std::vector<ModuleFailure> out;
    for (const auto& r : tx.exec_params(
             "SELECT DISTINCT ON (b.name) b.name, mr.outcome, mr.message FROM alerts a "
             "JOIN builds bu ON bu.commit_id = a.first_bad_commit_id AND bu.recipe_id = a.recipe_id "
             // The suite by its manifest, as the series reads it: a suite row
             // of another name with the same modules is the same suite.
             "JOIN suites sa ON sa.id = a.suite_id "
             "JOIN evaluations e ON e.build_id = bu.id AND e.policy_id = a.policy_id AND e.status = 'done' "
             "JOIN suites se ON se.id = e.suite_id AND se.manifest_hash = sa.manifest_hash "
             "JOIN module_results mr ON mr.evaluation_id = e.id AND mr.heuristic = $2 AND mr.outcome <> 'ok' "
             "JOIN benchmarks b ON b.id = mr.benchmark_id "
             "WHERE a.id = $1 ORDER BY b.name, e.id DESC",
             alert_id, heuristic))
      out.push_back({r[0].as<std::string>(), r[1].as<std::string>(), r[2].as<std::string>()});
    return out;
  });
}

int adopt_unnotified_alerts(Database& db, const std::string& project) {
  return db.impl().guarded("adopting alerts raised without a channel", [&] {
    pqxx::work tx(db.impl().conn);
    auto r = tx.exec_params("UPDATE alerts SET notify_state = 'pending' "
                            "WHERE project = $1 AND notify_state = 'none' AND state = 'open'",
                            project);
    tx.commit();
    return static_cast<int>(r.affected_rows());
  });
}

namespace {

/// Alert a's opening, still pending, is to be told ($2: kRecoveredNotePrefix):
/// while it is open, and also once driftwatch found it over if no person
/// acted on it (acknowledged, resolved or ignored it) since driftwatch
/// opened it. A failure that began and ended while the channels were down (a
/// two-week crash) is still news to them: they get its opening, then its
/// end (mark_delivery makes that due); channels told of it before (a
/// narrowed alert's) get the end alone (sweep/notify.cpp).
const char* kOpeningDue =
    "a.notify_state = 'pending' AND (a.state = 'open' OR (a.state = 'resolved' AND a.state_by = 'driftwatch' "
    "AND starts_with(a.note, $2) AND NOT " ACTED_ON_SINCE_OPENED ")) ";
#undef ACTED_ON_SINCE_OPENED
#undef FOUND_OVER_PENDING
#undef REPINNED_NOTE

}  // namespace

std::vector<AlertView> undelivered_alerts(Database& db, const std::string& project) {
  return db.impl().guarded("listing undelivered alerts", [&] {
    pqxx::read_transaction tx(db.impl().conn);
    std::vector<AlertView> out;
    for (const auto& r : tx.exec_params(std::string(kAlertColumns) + "WHERE a.project = $1 AND " + kOpeningDue +
                                            "ORDER BY a.notify_attempts, a.id",
                                        project, kRecoveredNotePrefix))
      out.push_back(alert_view(r));
    return out;
  });
}

std::vector<AlertView> undelivered_resolutions(Database& db, const std::string& project) {
  return db.impl().guarded("listing undelivered resolutions", [&] {
    pqxx::read_transaction tx(db.impl().conn);
    std::vector<AlertView> out;
    for (const auto& r : tx.exec_params(std::string(kAlertColumns) +
                                            "WHERE a.project = $1 AND a.resolution_notify_state = 'pending' "
                                            "AND a.state = 'resolved' ORDER BY a.resolution_notify_attempts, a.id",
                                        project))
      out.push_back(alert_view(r));
    return out;
  });
}

int drop_pending_resolutions(Database& db, const std::string& project) {
  return db.impl().guarded("letting alerts' ends go", [&] {
    pqxx::work tx(db.impl().conn);
    auto r = tx.exec_params(
        "UPDATE alerts SET resolution_notify_state = 'none' WHERE project = $1 AND resolution_notify_state = 'pending'",
        project);
    tx.commit();
    return static_cast<int>(r.affected_rows());
  });
}

// The key of the session advisory lock that holds one alert's delivery.
#define DELIVERY_LOCK "(hashtext('driftwatch alert delivery'), ($1::bigint & 2147483647)::int)"

std::optional<AlertView> claim_delivery(Database& db, Id id, bool resolution) {
  return db.impl().guarded("claiming an alert's delivery", [&]() -> std::optional<AlertView> {
    pqxx::nontransaction nt(db.impl().conn);
    if (!nt.exec_params1("SELECT pg_try_advisory_lock" DELIVERY_LOCK, id)[0].as<bool>())
      return std::nullopt;  // another process is delivering it now
    // Read again under the lock: the other process may have delivered it
    // (or someone acknowledged it) since the list was read.
    auto r = resolution ? nt.exec_params(std::string(kAlertColumns) +
                                             "WHERE a.id = $1 AND a.resolution_notify_state = 'pending' "
                                             "AND a.state = 'resolved'",
                                         id)
                        : nt.exec_params(std::string(kAlertColumns) + "WHERE a.id = $1 AND " + kOpeningDue, id,
                                         kRecoveredNotePrefix);
    if (r.empty()) {
      nt.exec_params("SELECT pg_advisory_unlock" DELIVERY_LOCK, id);
      return std::nullopt;
    }
    return alert_view(r[0]);
  });
}

void release_delivery(Database& db, Id id) {
  db.impl().guarded("releasing an alert's delivery", [&] {
    pqxx::nontransaction nt(db.impl().conn);
    nt.exec_params("SELECT pg_advisory_unlock" DELIVERY_LOCK, id);
  });
}

#undef DELIVERY_LOCK

void mark_delivery(Database& db, Id id, const Delivered& d) {
  db.impl().guarded("recording a delivery", [&] {
    pqxx::work tx(db.impl().conn);
    // The opening's columns, or the end's (resolution_…): the same moves.
    // An end is recorded only on an alert still resolved: one reopened
    // meanwhile has no end yet, and a later one must reach every channel.
    std::string p = d.resolution ? "resolution_" : "";
    tx.exec_params("UPDATE alerts SET " + p + "notify_state = CASE WHEN $2 THEN 'sent' ELSE " + p +
                       "notify_state END, " + p + "hook_sent = " + p + "hook_sent OR $3, " + p + "webhook_sent = " + p +
                       "webhook_sent OR $4, " + p + "notify_attempts = " + p +
                       "notify_attempts + CASE WHEN $7 THEN 1 ELSE 0 END, " + p + "notify_error = $5" +
                       " WHERE id = $1 AND fingerprint = $6" + (d.resolution ? " AND state = 'resolved'" : ""),
                   id, d.error.empty(), d.hook, d.webhook, d.error, d.fingerprint, d.attempted);
    if (!d.resolution && (d.hook || d.webhook)) {
      // Found over by a sweep before this opening reached these channels (it
      // was on its way, or they were down): its end is due to them now. With
      // no end due yet, that is to every channel told; with one due or sent
      // already, to the channels told for the first time now. Read before
      // the told flags below take them in.
      tx.exec_params(
          "UPDATE alerts SET "
          "resolution_hook_sent = CASE WHEN resolution_notify_state = 'none' THEN NOT (hook_told OR $2) "
          "  ELSE resolution_hook_sent AND (hook_told OR NOT $2) END, "
          "resolution_webhook_sent = CASE WHEN resolution_notify_state = 'none' THEN NOT (webhook_told OR $3) "
          "  ELSE resolution_webhook_sent AND (webhook_told OR NOT $3) END, "
          "resolution_notify_attempts = CASE WHEN resolution_notify_state = 'pending' "
          "  THEN resolution_notify_attempts ELSE 0 END, "
          "resolution_notify_error = CASE WHEN resolution_notify_state = 'pending' THEN resolution_notify_error "
          "  ELSE '' END, "
          "resolution_notify_state = 'pending' "
          "WHERE id = $1 AND state = 'resolved' AND state_by = 'driftwatch' AND starts_with(note, $4) "
          "AND (resolution_notify_state = 'none' OR ($2 AND NOT hook_told) OR ($3 AND NOT webhook_told))",
          id, d.hook, d.webhook, kRecoveredNotePrefix);
      // A channel that took an opening heard of this alert, whatever its pin
      // now (a sweep may have narrowed it meanwhile): its end is theirs too.
      tx.exec_params("UPDATE alerts SET hook_told = hook_told OR $2, webhook_told = webhook_told OR $3 WHERE id = $1",
                     id, d.hook, d.webhook);
    }
    tx.commit();
  });
}

void record_drift_point(Database& db, const std::string& project, const std::string& policy_hash,
                        const std::string& suite_hash, const std::string& metric, Id commit_id, int position,
                        double value, int wins, int ties, int losses, bool is_change_point) {
  db.impl().guarded("recording a drift point", [&] {
    pqxx::work tx(db.impl().conn);
    tx.exec_params(std::string("INSERT INTO drift_points (project, policy_id, suite_id, metric, commit_id, position, "
                               "uplift, wins, ties, losses, is_change_point) VALUES ($1, ") +
                       kPolicyId + ", " + kSuiteId +
                       ", $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (project, policy_id, suite_id, metric, commit_id) "
                       "DO UPDATE SET position = EXCLUDED.position, uplift = EXCLUDED.uplift, "
                       "wins = EXCLUDED.wins, ties = EXCLUDED.ties, losses = EXCLUDED.losses, "
                       "is_change_point = EXCLUDED.is_change_point",
                   project, policy_hash, suite_hash, metric, commit_id, position, value, wins, ties, losses,
                   is_change_point);
    tx.commit();
  });
}

}  // namespace db
