-- Inference evaluation runs (spec 4.6), in the SQL both ClickHouse 18.16 and current releases
-- accept. A run's record changes as the run goes on (its progress, then its status, summary and
-- end): each save writes the whole row again under the same id with a higher `version`, reads
-- take the newest version of each id (ORDER BY version DESC LIMIT 1 BY id) and merges keep it.
-- A datapoint's result written again replaces the earlier one the same way. The summary, the
-- scores and the evaluators' errors are JSON text (a score's `true` stays apart from `1`, and a
-- float reads back bit for bit); NULL is an absent field. Times are epoch milliseconds.

CREATE TABLE IF NOT EXISTS EvaluationRun (
  id UUID,
  function_name String,
  variant_name String,
  dataset_name String,
  evaluation_name Nullable(String),
  evaluator_names Array(String),
  datapoint_count UInt32,
  status Enum8('running' = 1, 'completed' = 2, 'stopped_early' = 3, 'failed' = 4),
  completed UInt32,
  errors UInt32,
  summary String,
  started_at_ms UInt64,
  finished_at_ms Nullable(UInt64),
  failure Nullable(String),
  version UInt64
) ENGINE = ReplacingMergeTree(version) ORDER BY id;

CREATE TABLE IF NOT EXISTS EvaluationResult (
  run_id UUID,
  datapoint_id UUID,
  inference_id Nullable(UUID),
  scores String,
  evaluator_errors String,
  error Nullable(String),
  timestamp_ms UInt64,
  version UInt64
) ENGINE = ReplacingMergeTree(version) ORDER BY (run_id, datapoint_id);
