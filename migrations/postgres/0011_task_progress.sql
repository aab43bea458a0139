-- How far each durable task got (src/tasks/service.ts `RunningTask.progress`), readable by any
-- process while the task runs. The tasks themselves live in pg-boss's own schema
-- (gateway_tasks, layers/tasks/pgBoss.ts), whose jobs cannot be written to while they run.
-- A row outlives its task by at most the sweep's age (layers/tasks/pgBoss.ts), which is longer
-- than pg-boss keeps an ended job.

CREATE TABLE gateway_task_progress (
  task_id uuid PRIMARY KEY,
  progress jsonb,
  updated_at timestamptz NOT NULL
);
-- the sweep of rows older than any task pg-boss still keeps
CREATE INDEX gateway_task_progress_updated_at ON gateway_task_progress (updated_at);
