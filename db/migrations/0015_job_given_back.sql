-- How many times a job was handed back by a worker that lost its database
-- connection (its attempt given back). A connection cut on every run (a
-- server's idle_session_timeout, a proxy's idle limit shorter than an
-- evaluation) lost every attempt's results and gave every attempt back: the
-- job ran for ever. Past a few give-backs, a lost connection spends the
-- attempt as any other failure does.
ALTER TABLE jobs ADD COLUMN given_back integer NOT NULL DEFAULT 0;
