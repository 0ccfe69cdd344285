#pragma once
// Internal to db/: the SQL by which driftwatch itself moves a series' alerts,
// with an event each, when the series ends (a suite rebuilt, a recipe or a
// policy replaced) and when it is the project's again. One statement each,
// so every such move leaves the same history.
#include <string>

namespace db {

/// Resolves the project's ($1) open and acknowledged alerts that `where` (SQL
/// on alerts, its values from $3 on) holds, with the note $2 in their
/// history; returns the ids.
inline std::string resolving_sql(const std::string& where) {
  return "WITH closed AS (UPDATE alerts SET state = 'resolved', state_by = 'driftwatch', note = $2, updated_at = now() "
         "  WHERE project = $1 AND state IN ('open', 'acknowledged') AND " +
         where +
         " RETURNING id) "
         "INSERT INTO alert_events (alert_id, state, who, note) SELECT id, 'resolved', 'driftwatch', $2 FROM closed "
         "RETURNING alert_id";
}

/// Reopens, with the note $2, the project's ($1) alerts that driftwatch
/// resolved with a note starting with $3 and that `where` (its values from $4
/// on) holds: never one a person resolved.
inline std::string reopening_sql(const std::string& where) {
  return "WITH reopened AS (UPDATE alerts SET state = 'open', state_by = 'driftwatch', note = $2, updated_at = now() "
         "  WHERE project = $1 AND state = 'resolved' AND state_by = 'driftwatch' AND starts_with(note, $3) AND " +
         where +
         " RETURNING id) "
         "INSERT INTO alert_events (alert_id, state, who, note) SELECT id, 'open', 'driftwatch', $2 FROM reopened";
}

}  // namespace db
