-- An alert's history is read by alert: whether a person acted on it since
-- driftwatch opened it decides whether its late opening is owed, and is
-- asked of each pending alert driftwatch found over on every delivery.
CREATE INDEX alert_events_by_alert ON alert_events (alert_id, id);
