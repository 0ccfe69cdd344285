-- The machines on which a job's attempts failed: a retry goes to another
-- machine while one is at work, so one bad node (a full disk, a broken
-- toolchain) does not spend all of a job's attempts by itself.
ALTER TABLE jobs ADD COLUMN failed_hosts text[] NOT NULL DEFAULT '{}';
