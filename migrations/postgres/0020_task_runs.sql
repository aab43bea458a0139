-- How many times each durable task has run, since when gateways have declined it and which, and
-- which gateway processes take tasks of each kind (layers/tasks/pgBoss.ts). The tries are
-- counted here rather than by pg-boss: a gateway whose configuration cannot run a task declines
-- it, and a decline is a pg-boss retry that must not use up the task's tries.
--   runs: runs started and not declined (nor interrupted in their process)
--   last_error: the message of the last failed run, for a run that finds the tries used up
--   declined_at: the first decline since a run last got past its check (null when none)
--   declined_by: the processes (gateway_task_workers.worker_id) that declined it since then

ALTER TABLE gateway_task_progress ADD COLUMN runs integer NOT NULL DEFAULT 0;
ALTER TABLE gateway_task_progress ADD COLUMN last_error text;
ALTER TABLE gateway_task_progress ADD COLUMN declined_at timestamptz;
ALTER TABLE gateway_task_progress ADD COLUMN declined_by text[];

-- One row per process and task kind it runs, refreshed while the process lives and deleted when
-- it stops: a task fails as one no configuration can run only once every live process of its
-- kind has declined it (one that is busy has not, and may run it later).
CREATE TABLE gateway_task_workers (
  worker_id text NOT NULL,
  kind text NOT NULL,
  seen_at timestamptz NOT NULL,
  PRIMARY KEY (worker_id, kind)
);
CREATE INDEX gateway_task_workers_kind ON gateway_task_workers (kind, seen_at);
