-- How many times each durable task has run, and since when gateways have declined it
-- (layers/tasks/pgBoss.ts). The tries are counted here rather than by pg-boss: a gateway whose
-- configuration cannot run a task declines it, and a decline is a pg-boss retry that must not
-- use up the task's tries.
--   runs: runs started and not declined (nor interrupted by their process stopping)
--   last_error: the message of the last failed run, for a run that finds the tries used up
--   declined_at: the first decline since a run last got past its check (null when none)

ALTER TABLE gateway_task_progress ADD COLUMN runs integer NOT NULL DEFAULT 0;
ALTER TABLE gateway_task_progress ADD COLUMN last_error text;
ALTER TABLE gateway_task_progress ADD COLUMN declined_at timestamptz;
