-- A job is keyed by what it computes (one compiler, one policy, one suite),
-- so two projects that plan the same work share its row, which names only
-- the first. Each project that planned a job is recorded here, and its
-- workers may take the job: a project's sweep waited for ever on a shared
-- job only the other project's workers were allowed to run.
CREATE TABLE job_projects (
  job_id   bigint NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  project  text NOT NULL,
  PRIMARY KEY (job_id, project)
);
CREATE INDEX job_projects_by_project ON job_projects (project, job_id);
INSERT INTO job_projects (job_id, project) SELECT id, project FROM jobs;
-- Before this, a build job was shared with every project one of whose own
-- evaluations depended on it.
INSERT INTO job_projects (job_id, project)
  SELECT DISTINCT e.depends_on, e.project FROM jobs e WHERE e.depends_on IS NOT NULL
  ON CONFLICT DO NOTHING;
