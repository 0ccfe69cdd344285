-- How many of a job's failed attempts timed out. A build that hung once and
-- hangs again on the retry is the check-in's result: a third attempt would
-- only spend one more timeout (hours, for LLVM) on it.
ALTER TABLE jobs ADD COLUMN timeouts integer NOT NULL DEFAULT 0;
