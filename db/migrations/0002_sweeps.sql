-- Sweeps and their jobs. A sweep plans rows of `jobs` (build a check-in;
-- evaluate a build × suite × policy) and workers claim them; the same rows
-- serve the local workers of `driftwatch sweep` and remote `driftwatch worker`s.

-- One run of `driftwatch sweep` for a project.
CREATE TABLE sweeps (
  id           bigserial PRIMARY KEY,
  project      text NOT NULL,
  state        text NOT NULL DEFAULT 'running'
                 CHECK (state IN ('running', 'done', 'failed', 'interrupted')),
  -- The newest check-in the sweep planned: where `sweep --new` starts next time.
  head_sha     text NOT NULL DEFAULT '',
  planned      integer NOT NULL DEFAULT 0,   -- check-ins sampled
  message      text NOT NULL DEFAULT '',
  started_at   timestamptz NOT NULL DEFAULT now(),
  finished_at  timestamptz
);
CREATE INDEX sweeps_by_project ON sweeps (project, id);

-- Jobs are identified by what they compute (`key`), so two sweeps over the
-- same range enqueue nothing twice and a job done is never enqueued again.
ALTER TABLE jobs ADD COLUMN project text NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN key text;
ALTER TABLE jobs ADD COLUMN sweep_id bigint REFERENCES sweeps(id);
ALTER TABLE jobs ADD COLUMN depends_on bigint REFERENCES jobs(id);
ALTER TABLE jobs ADD COLUMN max_attempts integer NOT NULL DEFAULT 3;
ALTER TABLE jobs ADD COLUMN started_at timestamptz;
ALTER TABLE jobs ADD COLUMN finished_at timestamptz;
ALTER TABLE jobs ALTER COLUMN key SET NOT NULL;
CREATE UNIQUE INDEX jobs_by_key ON jobs (key);
CREATE INDEX jobs_by_project ON jobs (project, state);

-- 'skipped': an evaluation whose check-in did not build (nothing to evaluate).
ALTER TABLE jobs DROP CONSTRAINT jobs_state_check;
ALTER TABLE jobs ADD CONSTRAINT jobs_state_check
  CHECK (state IN ('queued', 'running', 'done', 'failed', 'skipped'));

-- An evaluation cut short (a signal, a lost lease) is 'interrupted', not 'running' forever.
ALTER TABLE evaluations DROP CONSTRAINT evaluations_status_check;
ALTER TABLE evaluations ADD CONSTRAINT evaluations_status_check
  CHECK (status IN ('running', 'done', 'failed', 'interrupted'));
