-- A project whose recipe changes (a new compile line) measures a new series
-- of builds: its alerts are that series', as a rebuilt suite's are, and the
-- recipe is part of their fingerprint. NULL for alerts opened before: the
-- next sweep that finds the same change gives it its recipe (db::open_alert).
ALTER TABLE alerts ADD COLUMN recipe_id bigint REFERENCES recipes(id);
