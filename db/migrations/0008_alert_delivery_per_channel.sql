-- An alert goes to a hook and a webhook. When one of them failed, the next
-- sweep retries only that one: running a hook again that already succeeded
-- opened a second ticket or mail for the same alert.
ALTER TABLE alerts ADD COLUMN hook_sent boolean NOT NULL DEFAULT false;
ALTER TABLE alerts ADD COLUMN webhook_sent boolean NOT NULL DEFAULT false;
