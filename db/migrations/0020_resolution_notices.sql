-- A failure that is over (a build fixed, a crash gone) is news to whoever
-- was told it began: the channels its opening reached are told it ended
-- too, once, with their own delivery state, since the opening notice is
-- long sent by then.
-- hook_told, webhook_told: the opening ever reached that channel (hook_sent
-- and webhook_sent are cleared when a narrowed alert is due again).
ALTER TABLE alerts ADD COLUMN hook_told boolean NOT NULL DEFAULT false;
ALTER TABLE alerts ADD COLUMN webhook_told boolean NOT NULL DEFAULT false;
UPDATE alerts SET hook_told = hook_sent, webhook_told = webhook_sent;
-- 'none': nothing to tell (not over by itself, or its opening reached nobody).
ALTER TABLE alerts ADD COLUMN resolution_notify_state text NOT NULL DEFAULT 'none'
  CHECK (resolution_notify_state IN ('none', 'pending', 'sent'));
ALTER TABLE alerts ADD COLUMN resolution_notify_attempts integer NOT NULL DEFAULT 0;
ALTER TABLE alerts ADD COLUMN resolution_notify_error text NOT NULL DEFAULT '';
-- A person reopened it after driftwatch resolved it as over: they doubt
-- that end, so the analysis does not resolve it (and tell it) again.
ALTER TABLE alerts ADD COLUMN end_doubted boolean NOT NULL DEFAULT false;
-- Set for a channel the opening never reached: it is not told the end.
ALTER TABLE alerts ADD COLUMN resolution_hook_sent boolean NOT NULL DEFAULT false;
ALTER TABLE alerts ADD COLUMN resolution_webhook_sent boolean NOT NULL DEFAULT false;
