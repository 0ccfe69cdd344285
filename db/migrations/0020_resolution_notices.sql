-- A failure that is over (a build fixed, a crash gone) is news to whoever
-- was told it began: its alert's channels are told it ended too, once, with
-- their own delivery state, since the opening notice is long sent by then.
-- 'none': nothing to tell (not over by itself, or its opening never sent).
ALTER TABLE alerts ADD COLUMN resolution_notify_state text NOT NULL DEFAULT 'none'
  CHECK (resolution_notify_state IN ('none', 'pending', 'sent'));
ALTER TABLE alerts ADD COLUMN resolution_notify_attempts integer NOT NULL DEFAULT 0;
ALTER TABLE alerts ADD COLUMN resolution_hook_sent boolean NOT NULL DEFAULT false;
ALTER TABLE alerts ADD COLUMN resolution_webhook_sent boolean NOT NULL DEFAULT false;
