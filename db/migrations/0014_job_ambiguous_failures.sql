-- How many of a job's failed attempts may have been its input's doing (a
-- build that timed out or failed without a word, an evaluation whose compile
-- hung or was killed), not only the machine's (a full disk, a kill of the
-- worker). Only when every attempt before the last was such a failure does
-- the last one's become the check-in's result: two attempts lost to a full
-- disk and one timeout are the machine's, and tried again by the next sweep.
ALTER TABLE jobs ADD COLUMN ambiguous_failures integer NOT NULL DEFAULT 0;
