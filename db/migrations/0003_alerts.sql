-- Drift alerts as people act on them: what kind of change, the evidence, the
-- check-in it was pinned to (or the range, when only broken builds lie
-- between), who moved it through its states, and whether it was delivered.

ALTER TABLE alerts ADD COLUMN project text NOT NULL DEFAULT '';
ALTER TABLE alerts ADD COLUMN kind text NOT NULL DEFAULT 'uplift-dropped'
  CHECK (kind IN ('uplift-dropped', 'uplift-rose', 'size-changed', 'modules-flipped',
                  'feature-set-changed', 'build-broken'));
-- Everything the alert says, as JSON: levels before and after, modules, features.
ALTER TABLE alerts ADD COLUMN details jsonb NOT NULL DEFAULT '{}';
-- The culprit could only be narrowed to (range_first .. first_bad]: broken builds in between.
ALTER TABLE alerts ADD COLUMN range_first_commit_id bigint REFERENCES commits(id);
ALTER TABLE alerts ADD COLUMN state_by text NOT NULL DEFAULT '';
-- Delivery to the project's hook and webhook: retried by later sweeps until sent.
ALTER TABLE alerts ADD COLUMN notify_state text NOT NULL DEFAULT 'pending'
  CHECK (notify_state IN ('pending', 'sent', 'none'));
ALTER TABLE alerts ADD COLUMN notify_attempts integer NOT NULL DEFAULT 0;
ALTER TABLE alerts ADD COLUMN notify_error text NOT NULL DEFAULT '';
CREATE INDEX alerts_by_project ON alerts (project, state);

-- Every change of an alert's state, with who, when and a note.
CREATE TABLE alert_events (
  id        bigserial PRIMARY KEY,
  alert_id  bigint NOT NULL REFERENCES alerts(id) ON DELETE CASCADE,
  state     text NOT NULL,
  who       text NOT NULL DEFAULT '',
  note      text NOT NULL DEFAULT '',
  at        timestamptz NOT NULL DEFAULT now()
);

-- Bisection evaluations are ordinary sweep jobs; drift points record the
-- series the analysis saw, now per project.
ALTER TABLE drift_points ADD COLUMN project text NOT NULL DEFAULT '';
ALTER TABLE drift_points ADD COLUMN position integer NOT NULL DEFAULT 0;
