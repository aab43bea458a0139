-- Workflow evaluation runs and their episodes (spec 2.7, 4.6), in the SQL both ClickHouse 18.16
-- and current releases accept. Neither changes once written: a row written twice (a retried
-- insert) collapses into one, and reads dedupe with LIMIT 1 BY id meanwhile. A run's pinned
-- variants are a Nested column of function and variant names; `timestamp_ms` is the time of
-- the id (a UUIDv7).

CREATE TABLE IF NOT EXISTS WorkflowEvaluationRun (
  id UUID,
  variants Nested(function_name String, variant_name String),
  project_name Nullable(String),
  display_name Nullable(String),
  tags Nested(key String, value String),
  timestamp_ms UInt64
) ENGINE = ReplacingMergeTree ORDER BY id;

-- Sorted by id: an inference carrying a run episode's id finds it with a key lookup.
CREATE TABLE IF NOT EXISTS WorkflowEvaluationRunEpisode (
  id UUID,
  run_id UUID,
  task_name Nullable(String),
  tags Nested(key String, value String),
  timestamp_ms UInt64
) ENGINE = ReplacingMergeTree ORDER BY id;

-- A run's episodes, sorted by run (filled by a materialized view): reading a run back and
-- summing up its feedback find its episodes without scanning every run's.
CREATE TABLE IF NOT EXISTS WorkflowEvaluationRunEpisodeByRunId (
  run_id UUID,
  id UUID,
  task_name Nullable(String),
  tags Nested(key String, value String),
  timestamp_ms UInt64
) ENGINE = ReplacingMergeTree ORDER BY (run_id, id);

CREATE MATERIALIZED VIEW IF NOT EXISTS WorkflowEvaluationRunEpisodeByRunIdView TO WorkflowEvaluationRunEpisodeByRunId AS
  SELECT run_id, id, task_name, tags.key, tags.value, timestamp_ms FROM WorkflowEvaluationRunEpisode;
