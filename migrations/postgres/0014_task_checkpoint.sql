-- The state a durable task saved to resume from (src/tasks/service.ts `RunningTask.checkpoint`):
-- a task run again after its process died reads it back (`RunningTask.resumeFrom`) and goes on
-- from there instead of starting over. Kept beside the task's progress, swept with it.

ALTER TABLE gateway_task_progress ADD COLUMN checkpoint jsonb;
