-- driftwatch schema, version 1. Every table is declared here once; later
-- changes come as new numbered files, never as edits to this one.

-- A compiler's git repository, identified by its path or URL.
CREATE TABLE repositories (
  id          bigserial PRIMARY KEY,
  location    text NOT NULL UNIQUE,
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- Check-ins driftwatch has seen. `position` is the index on the first-parent
-- walk of the branch it was sampled from (bisection and ordering use it).
CREATE TABLE commits (
  id             bigserial PRIMARY KEY,
  repository_id  bigint NOT NULL REFERENCES repositories(id),
  sha            text NOT NULL,
  parents        text NOT NULL DEFAULT '',          -- space-separated shas
  author         text NOT NULL DEFAULT '',
  committed_at   timestamptz NOT NULL,
  subject        text NOT NULL DEFAULT '',
  UNIQUE (repository_id, sha)
);

-- Build recipes, by content hash: a changed recipe is a different build.
CREATE TABLE recipes (
  id            bigserial PRIMARY KEY,
  name          text NOT NULL,
  content_hash  text NOT NULL UNIQUE,
  body          text NOT NULL
);

CREATE TABLE builds (
  id             bigserial PRIMARY KEY,
  commit_id      bigint NOT NULL REFERENCES commits(id),
  recipe_id      bigint NOT NULL REFERENCES recipes(id),
  outcome        text NOT NULL CHECK (outcome IN
                   ('ok', 'configure-failed', 'build-failed', 'timeout', 'missing-artifact')),
  seconds        double precision NOT NULL DEFAULT 0,
  artifact_dir   text NOT NULL DEFAULT '',
  log_path       text NOT NULL DEFAULT '',
  log_tail       text NOT NULL DEFAULT '',
  -- Feature-set compatibility of policies with this compiler build (policy/).
  feature_report jsonb,
  built_at       timestamptz NOT NULL DEFAULT now(),
  UNIQUE (commit_id, recipe_id)
);

-- Frozen learned heuristics, by content hash of the policy file.
CREATE TABLE policies (
  id               bigserial PRIMARY KEY,
  name             text NOT NULL,
  content_hash     text NOT NULL UNIQUE,
  parent_id        bigint REFERENCES policies(id),
  trained_commit   text NOT NULL DEFAULT '',
  metadata         jsonb NOT NULL DEFAULT '{}',
  created_at       timestamptz NOT NULL DEFAULT now()
);

-- A benchmark suite as its manifest describes it; a changed manifest is a new suite row.
CREATE TABLE suites (
  id             bigserial PRIMARY KEY,
  name           text NOT NULL,
  manifest_hash  text NOT NULL,
  metadata       jsonb NOT NULL DEFAULT '{}',
  UNIQUE (name, manifest_hash)
);

-- One module (translation unit) of a suite.
CREATE TABLE benchmarks (
  id            bigserial PRIMARY KEY,
  suite_id      bigint NOT NULL REFERENCES suites(id) ON DELETE CASCADE,
  name          text NOT NULL,
  content_hash  text NOT NULL,
  language      text NOT NULL DEFAULT '',
  UNIQUE (suite_id, name)
);

-- One (compiler build, policy, suite) evaluation.
CREATE TABLE evaluations (
  id            bigserial PRIMARY KEY,
  build_id      bigint NOT NULL REFERENCES builds(id),
  policy_id     bigint NOT NULL REFERENCES policies(id),
  suite_id      bigint NOT NULL REFERENCES suites(id),
  status        text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'done', 'failed')),
  compat_report jsonb,
  summary       jsonb,
  started_at    timestamptz NOT NULL DEFAULT now(),
  finished_at   timestamptz,
  UNIQUE (build_id, policy_id, suite_id)
);

-- What happened to one module under one heuristic.
CREATE TABLE module_results (
  evaluation_id  bigint NOT NULL REFERENCES evaluations(id) ON DELETE CASCADE,
  benchmark_id   bigint NOT NULL REFERENCES benchmarks(id),
  heuristic      text NOT NULL CHECK (heuristic IN ('default', 'learned')),
  outcome        text NOT NULL CHECK (outcome IN ('ok', 'compiler-crashed', 'timeout')),
  message        text NOT NULL DEFAULT '',
  PRIMARY KEY (evaluation_id, benchmark_id, heuristic)
);

-- Numbers, one row per (module, heuristic, metric); bulk-loaded with COPY.
CREATE TABLE measurements (
  evaluation_id  bigint NOT NULL REFERENCES evaluations(id) ON DELETE CASCADE,
  benchmark_id   bigint NOT NULL REFERENCES benchmarks(id),
  heuristic      text NOT NULL CHECK (heuristic IN ('default', 'learned')),
  metric         text NOT NULL,
  value          double precision NOT NULL,
  PRIMARY KEY (evaluation_id, benchmark_id, heuristic, metric)
);

-- The uplift series: one point per (policy, suite, metric, commit).
CREATE TABLE drift_points (
  id               bigserial PRIMARY KEY,
  policy_id        bigint NOT NULL REFERENCES policies(id),
  suite_id         bigint NOT NULL REFERENCES suites(id),
  metric           text NOT NULL,
  commit_id        bigint NOT NULL REFERENCES commits(id),
  uplift           double precision NOT NULL,
  wins             integer NOT NULL DEFAULT 0,
  ties             integer NOT NULL DEFAULT 0,
  losses           integer NOT NULL DEFAULT 0,
  is_change_point  boolean NOT NULL DEFAULT false,
  UNIQUE (policy_id, suite_id, metric, commit_id)
);

-- Drift alerts, deduplicated across sweeps by fingerprint.
CREATE TABLE alerts (
  id                bigserial PRIMARY KEY,
  fingerprint       text NOT NULL UNIQUE,
  policy_id         bigint NOT NULL REFERENCES policies(id),
  suite_id          bigint NOT NULL REFERENCES suites(id),
  metric            text NOT NULL,
  state             text NOT NULL DEFAULT 'open'
                      CHECK (state IN ('open', 'acknowledged', 'resolved', 'ignored')),
  last_good_commit_id  bigint REFERENCES commits(id),
  first_bad_commit_id  bigint REFERENCES commits(id),
  culprit_commit_id    bigint REFERENCES commits(id),
  magnitude         double precision NOT NULL DEFAULT 0,
  note              text NOT NULL DEFAULT '',
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE retraining_decisions (
  id                   bigserial PRIMARY KEY,
  policy_id            bigint NOT NULL REFERENCES policies(id),
  head_commit_id       bigint REFERENCES commits(id),
  decision             text NOT NULL CHECK (decision IN ('keep', 'retrain')),
  reasons              jsonb NOT NULL DEFAULT '[]',
  candidate_policy_id  bigint REFERENCES policies(id),
  promoted             boolean NOT NULL DEFAULT false,
  decided_at           timestamptz NOT NULL DEFAULT now()
);

-- The work queue shared by `driftwatch worker`s: claimed with
-- SELECT … FOR UPDATE SKIP LOCKED, held by a lease that expires.
CREATE TABLE jobs (
  id                bigserial PRIMARY KEY,
  kind              text NOT NULL,
  payload           jsonb NOT NULL DEFAULT '{}',
  state             text NOT NULL DEFAULT 'queued'
                      CHECK (state IN ('queued', 'running', 'done', 'failed')),
  priority          integer NOT NULL DEFAULT 0,
  attempts          integer NOT NULL DEFAULT 0,
  lease_owner       text,
  lease_expires_at  timestamptz,
  result            jsonb,
  error             text,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX jobs_claimable ON jobs (state, priority DESC, id) WHERE state = 'queued';
