-- A project whose recipe changes (a new compile line) measures a new series
-- of builds: its alerts are that series', as a rebuilt suite's are, and the
-- recipe is part of their fingerprint. NULL: not known.
ALTER TABLE alerts ADD COLUMN recipe_id bigint REFERENCES recipes(id);

-- Alerts opened before were found on the builds of their first bad
-- check-in: those evaluated by their policy on their suite, else (a broken
-- build has no evaluation) any. Where that names one recipe, the alert gets
-- it, and its fingerprint the form sweeps write now (the recipe's hash after
-- the suite's), so the same change found again is this alert, not a new one
-- delivered again. Where it names none or several, the alert is left as it
-- was: it is then taken for every recipe's.
WITH built AS (
  SELECT a.id, b.recipe_id, bool_or(e.id IS NOT NULL) AS evaluated
  FROM alerts a
  JOIN builds b ON b.commit_id = a.first_bad_commit_id
  LEFT JOIN evaluations e ON e.build_id = b.id AND e.policy_id = a.policy_id AND e.suite_id = a.suite_id
  GROUP BY a.id, b.recipe_id
), found_on AS (
  SELECT k.id, min(k.recipe_id) AS recipe_id
  FROM built k
  WHERE k.evaluated OR NOT EXISTS (SELECT 1 FROM built o WHERE o.id = k.id AND o.evaluated)
  GROUP BY k.id
  HAVING count(*) = 1
)
UPDATE alerts a
SET recipe_id = f.recipe_id,
    fingerprint = a.project || '|' || p.content_hash || '|' || s.manifest_hash || '|' || r.content_hash ||
                  substr(a.fingerprint, length(a.project || '|' || p.content_hash || '|' || s.manifest_hash) + 1)
FROM found_on f, recipes r, policies p, suites s
WHERE a.id = f.id AND r.id = f.recipe_id AND p.id = a.policy_id AND s.id = a.suite_id
  AND left(a.fingerprint, length(a.project || '|' || p.content_hash || '|' || s.manifest_hash) + 1) =
      a.project || '|' || p.content_hash || '|' || s.manifest_hash || '|';
