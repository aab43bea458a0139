-- Workflow evaluation runs and their episodes (spec 2.7, 4.6). Neither changes once written.
-- Ids are UUIDv7, so ordering by id is ordering by time; `timestamp` is the time the id
-- carries. A run's pinned variants are a JSONB object of function name to variant name.
-- An episode's run is checked by the gateway before the episode is written, as on ClickHouse,
-- which has no foreign keys.

CREATE TABLE workflow_evaluation_run (
  id uuid PRIMARY KEY,
  variants jsonb NOT NULL,
  project_name text,
  display_name text,
  tags jsonb NOT NULL,
  timestamp timestamptz NOT NULL
);
-- listings, newest first, of every run or of one project's
CREATE INDEX workflow_evaluation_run_project ON workflow_evaluation_run (project_name, id);

-- The primary key is the lookup of an inference carrying a run episode's id.
CREATE TABLE workflow_evaluation_run_episode (
  id uuid PRIMARY KEY,
  run_id uuid NOT NULL,
  task_name text,
  tags jsonb NOT NULL,
  timestamp timestamptz NOT NULL
);
CREATE INDEX workflow_evaluation_run_episode_run ON workflow_evaluation_run_episode (run_id, id);
