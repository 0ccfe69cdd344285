-- How many of a job's failed attempts nothing but the machine can have
-- caused (a full disk, a compile killed before it asked the policy, a
-- compiler that cannot start). A timeout or a hang on the last attempt is the
-- check-in's result only when no attempt before failed so: two attempts lost
-- to a full disk and one timeout are the machine's, and the next sweep tries
-- the job afresh. Attempts whose cause is unknown (a worker that died) are
-- not counted, as rows from before this column are not.
ALTER TABLE jobs ADD COLUMN machine_failures integer NOT NULL DEFAULT 0;
