-- How many of a job's failed attempts in a row, up to the last, timed out
-- (a failure of another kind sets it back to 0). A build that hung and hangs
-- again on the retry is the check-in's result: a third attempt would only
-- spend one more timeout (hours, for LLVM) on it. And the retry after a
-- timeout keeps its -j, where one after a silent kill (the OOM killer) halves it.
ALTER TABLE jobs ADD COLUMN timeouts integer NOT NULL DEFAULT 0;
