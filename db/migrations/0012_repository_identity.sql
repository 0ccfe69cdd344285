-- A repository is its history, not the path it was first read at: a
-- checkout moved or cloned again must keep its series, alerts and builds.
-- `root` is the first commit of its first-parent history, NULL until
-- driftwatch next reads the repository (and for toolchains, or a shallow
-- clone, whose edge is no root). Every path it was read at maps to it;
-- `repositories.location` stays the first of them.
ALTER TABLE repositories ADD COLUMN root text;
CREATE UNIQUE INDEX repositories_root_key ON repositories (root) WHERE root IS NOT NULL;

CREATE TABLE repository_locations (
  location       text PRIMARY KEY,
  repository_id  bigint NOT NULL REFERENCES repositories(id)
);
INSERT INTO repository_locations (location, repository_id) SELECT location, id FROM repositories;
