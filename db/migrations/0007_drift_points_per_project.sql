-- Two projects may track one policy on one suite (another recipe, another
-- branch): each keeps its own series of points instead of overwriting the
-- other's.
ALTER TABLE drift_points DROP CONSTRAINT IF EXISTS drift_points_policy_id_suite_id_metric_commit_id_key;
ALTER TABLE drift_points ADD CONSTRAINT drift_points_per_project UNIQUE (project, policy_id, suite_id, metric, commit_id);
