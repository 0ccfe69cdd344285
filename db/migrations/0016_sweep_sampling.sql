-- The project's sampling settings (branch, from, since, until, every, tags)
-- a finished sweep planned its grid with. `sweep --new` keeps one grid only
-- while they stay the same: after an edit (an earlier `since`, a finer
-- `every`) the new grid's points before the last head were never planned,
-- and --new alone would never plan them. '' for sweeps before this column.
ALTER TABLE sweeps ADD COLUMN sampling text NOT NULL DEFAULT '';
