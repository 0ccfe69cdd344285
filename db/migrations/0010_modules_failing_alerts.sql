-- Modules the policy's compile newly crashes or times out on are compared at
-- their last measured size, so no figure of the series moves: an alert of
-- their own kind says it, with the modules in its details.
ALTER TABLE alerts DROP CONSTRAINT alerts_kind_check;
ALTER TABLE alerts ADD CONSTRAINT alerts_kind_check
  CHECK (kind IN ('uplift-dropped', 'uplift-rose', 'size-changed', 'modules-flipped', 'modules-failing',
                  'feature-set-changed', 'build-broken', 'policy-unusable'));
