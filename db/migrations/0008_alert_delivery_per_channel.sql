-- An alert goes to a hook and a webhook. When one of them failed, the next
-- sweep retries only that one: running a hook again that already succeeded
-- opened a second ticket or mail for the same alert.
ALTER TABLE alerts ADD COLUMN hook_sent boolean NOT NULL DEFAULT false;
ALTER TABLE alerts ADD COLUMN webhook_sent boolean NOT NULL DEFAULT false;
-- Alerts still pending from before: a channel the last error does not name
-- had taken the alert, so it is not sent there again.
UPDATE alerts SET hook_sent = notify_error NOT LIKE '%alert hook%',
                  webhook_sent = notify_error NOT LIKE '%webhook %'
  WHERE notify_state = 'pending' AND notify_attempts > 0;
