-- Retraining: each project's policy lineage (the frozen policy it started
-- from, every candidate retrained from it, promoted or rejected, with the
-- figures it was judged on), its one active policy, and every retraining
-- decision with its evidence, keep included.
CREATE TABLE project_policies (
  id              bigserial PRIMARY KEY,
  project         text NOT NULL,
  policy_id       bigint NOT NULL REFERENCES policies(id),
  parent_id       bigint REFERENCES project_policies(id),
  -- The policy file driftwatch keeps (under its data directory) or the project file's.
  file            text NOT NULL,
  trained_commit  text NOT NULL DEFAULT '',
  -- {"training": "train@…", "holdout": ["holdout@…"]}
  suites          jsonb NOT NULL DEFAULT '{}',
  -- What the candidate and the active policy measured on the held-out suites, and the training's own figures.
  figures         jsonb NOT NULL DEFAULT '{}',
  state           text NOT NULL CHECK (state IN ('active', 'retired', 'candidate', 'rejected')),
  reason          text NOT NULL DEFAULT '',
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project, policy_id)
);
-- One active policy per project; promotions also take an advisory lock.
CREATE UNIQUE INDEX project_policies_one_active ON project_policies (project) WHERE state = 'active';

-- Every `driftwatch decide`, with what each rule measured. 0001's placeholder
-- of this table was never written (nothing recorded decisions before this).
DROP TABLE IF EXISTS retraining_decisions;
CREATE TABLE retraining_decisions (
  id                 bigserial PRIMARY KEY,
  project            text NOT NULL,
  project_policy_id  bigint REFERENCES project_policies(id),
  verdict            text NOT NULL CHECK (verdict IN ('keep', 'retrain')),
  first_commit       text NOT NULL DEFAULT '',
  last_commit        text NOT NULL DEFAULT '',
  evidence           jsonb NOT NULL DEFAULT '{}',
  created_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX retraining_decisions_project ON retraining_decisions (project, id);
