-- A check-in where the policy cannot run at all (the compiler no longer sends
-- its features, or never consults it) is drift of the first order: an alert
-- of its own kind, with the evaluation's error in its details.
ALTER TABLE alerts DROP CONSTRAINT alerts_kind_check;
ALTER TABLE alerts ADD CONSTRAINT alerts_kind_check
  CHECK (kind IN ('uplift-dropped', 'uplift-rose', 'size-changed', 'modules-flipped',
                  'feature-set-changed', 'build-broken', 'policy-unusable'));
