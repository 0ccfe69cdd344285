-- From this version an alert driftwatch found over before its opening
-- reached a channel is still told there (its opening, then its end).
-- Openings left pending on resolved alerts by earlier versions are let go:
-- sent now, after the upgrade, they would be news of weeks or months ago.
UPDATE alerts SET notify_state = 'none' WHERE state <> 'open' AND notify_state = 'pending';
