-- Projects are known by name: two project files of one name (a second
-- `driftwatch init` elsewhere, a copied directory) would share one series,
-- one set of alerts and one lineage without a word. Each sweep records the
-- file it read, so the next one from another file that still exists warns.
ALTER TABLE sweeps ADD COLUMN project_file text NOT NULL DEFAULT '';
