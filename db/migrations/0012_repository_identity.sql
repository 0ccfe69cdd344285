-- A repository is its history, not the path it was first read at: a
-- checkout moved or cloned again must keep its series, alerts and builds.
-- `root` is the first commit of its first-parent line: NULL until
-- driftwatch next records one of its check-ins; '' where there is none to
-- go by (toolchains, a shallow clone) or another row holds it already (two
-- paths of one history recorded before this migration stay apart).
-- `also_at` lists the paths it was read at besides `location`: columns, not
-- a table, so a role granted SELECT on the tables before still reads them.
ALTER TABLE repositories ADD COLUMN root text, ADD COLUMN also_at text[] NOT NULL DEFAULT '{}';
CREATE UNIQUE INDEX repositories_root_key ON repositories (root) WHERE root <> '';
