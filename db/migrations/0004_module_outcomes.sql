-- Module outcomes distinguish why a compile gave no measurement (evaluator/
-- evaluation.h holds the one table of them): a compiler that ignored the ML
-- flags, a policy that refused the compiler's features, a broken ML
-- channel, an unreadable object and driftwatch's own failure are no longer
-- all "compiler-crashed".
ALTER TABLE module_results DROP CONSTRAINT module_results_outcome_check;
ALTER TABLE module_results ADD CONSTRAINT module_results_outcome_check CHECK (outcome IN
  ('ok', 'compiler-crashed', 'timeout', 'policy-not-consulted', 'policy-refused', 'channel-error',
   'object-unreadable', 'internal-error'));
