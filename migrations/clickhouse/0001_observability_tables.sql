-- The observability tables (spec 2.10), in the SQL both ClickHouse 18.16 and current releases
-- accept. Every table is a ReplacingMergeTree whose sorting key ends with the row's id, so a
-- row written twice (a retried batch) collapses into one; reads also dedupe with LIMIT 1 BY id,
-- since merges happen in the background. JSON values are kept as String.
-- `timestamp_ms` is the time carried by the row's UUIDv7 id, in epoch milliseconds.
-- Statements end with a semicolon at the end of a line.

CREATE TABLE IF NOT EXISTS ChatInference (
  id UUID,
  function_name String,
  variant_name String,
  episode_id UUID,
  input String,
  output String,
  tool_params Nullable(String),
  inference_params String,
  processing_time_ms UInt32,
  ttft_ms Nullable(UInt32),
  tags Nested(key String, value String),
  timestamp_ms UInt64
) ENGINE = ReplacingMergeTree ORDER BY (function_name, variant_name, episode_id, id);

CREATE TABLE IF NOT EXISTS JsonInference (
  id UUID,
  function_name String,
  variant_name String,
  episode_id UUID,
  input String,
  output String,
  output_schema Nullable(String),
  inference_params String,
  processing_time_ms UInt32,
  ttft_ms Nullable(UInt32),
  tags Nested(key String, value String),
  timestamp_ms UInt64
) ENGINE = ReplacingMergeTree ORDER BY (function_name, variant_name, episode_id, id);

-- Lookups by id and by episode, filled by materialized views on both inference tables: the
-- inference tables are sorted by function, so finding one row by id alone would scan them.
CREATE TABLE IF NOT EXISTS InferenceById (
  id UUID,
  function_name String,
  variant_name String,
  episode_id UUID,
  function_type Enum8('chat' = 1, 'json' = 2),
  output_schema Nullable(String),
  timestamp_ms UInt64
) ENGINE = ReplacingMergeTree ORDER BY id;

CREATE MATERIALIZED VIEW IF NOT EXISTS ChatInferenceById TO InferenceById AS
  SELECT id, function_name, variant_name, episode_id,
    CAST('chat' AS Enum8('chat' = 1, 'json' = 2)) AS function_type,
    CAST(NULL AS Nullable(String)) AS output_schema, timestamp_ms
  FROM ChatInference;

CREATE MATERIALIZED VIEW IF NOT EXISTS JsonInferenceById TO InferenceById AS
  SELECT id, function_name, variant_name, episode_id,
    CAST('json' AS Enum8('chat' = 1, 'json' = 2)) AS function_type,
    output_schema, timestamp_ms
  FROM JsonInference;

CREATE TABLE IF NOT EXISTS InferenceByEpisodeId (
  episode_id UUID,
  id UUID,
  function_name String,
  variant_name String,
  timestamp_ms UInt64
) ENGINE = ReplacingMergeTree ORDER BY (episode_id, id);

CREATE MATERIALIZED VIEW IF NOT EXISTS ChatInferenceByEpisodeId TO InferenceByEpisodeId AS
  SELECT episode_id, id, function_name, variant_name, timestamp_ms FROM ChatInference;

CREATE MATERIALIZED VIEW IF NOT EXISTS JsonInferenceByEpisodeId TO InferenceByEpisodeId AS
  SELECT episode_id, id, function_name, variant_name, timestamp_ms FROM JsonInference;

CREATE TABLE IF NOT EXISTS ModelInference (
  id UUID,
  inference_id UUID,
  model_name String,
  model_provider_name String,
  raw_request String,
  raw_response String,
  system Nullable(String),
  input_messages String,
  output String,
  input_tokens UInt32,
  output_tokens UInt32,
  response_time_ms UInt32,
  ttft_ms Nullable(UInt32),
  finish_reason Nullable(Enum8('stop' = 1, 'stop_sequence' = 2, 'length' = 3, 'tool_call' = 4, 'content_filter' = 5, 'unknown' = 6)),
  cached UInt8,
  timestamp_ms UInt64
) ENGINE = ReplacingMergeTree ORDER BY (inference_id, id);

-- Feedback: one table per kind, each with the metric name, the target (an inference or an
-- episode) and a value of the kind's type.
CREATE TABLE IF NOT EXISTS BooleanMetricFeedback (
  id UUID,
  target_id UUID,
  target_type Enum8('inference' = 1, 'episode' = 2),
  metric_name String,
  value UInt8,
  tags Nested(key String, value String),
  timestamp_ms UInt64
) ENGINE = ReplacingMergeTree ORDER BY (target_id, id);

-- 18.16 parses decimal floats inexactly (the last digit may differ), so the value is written as
-- the bits of the IEEE 754 double and `value` is computed from them, exactly.
CREATE TABLE IF NOT EXISTS FloatMetricFeedback (
  id UUID,
  target_id UUID,
  target_type Enum8('inference' = 1, 'episode' = 2),
  metric_name String,
  value_bits UInt64,
  value Float64 MATERIALIZED reinterpretAsFloat64(reinterpretAsString(value_bits)),
  tags Nested(key String, value String),
  timestamp_ms UInt64
) ENGINE = ReplacingMergeTree ORDER BY (target_id, id);

CREATE TABLE IF NOT EXISTS CommentFeedback (
  id UUID,
  target_id UUID,
  target_type Enum8('inference' = 1, 'episode' = 2),
  metric_name String,
  value String,
  tags Nested(key String, value String),
  timestamp_ms UInt64
) ENGINE = ReplacingMergeTree ORDER BY (target_id, id);

CREATE TABLE IF NOT EXISTS DemonstrationFeedback (
  id UUID,
  target_id UUID,
  target_type Enum8('inference' = 1, 'episode' = 2),
  metric_name String,
  value String,
  tags Nested(key String, value String),
  timestamp_ms UInt64
) ENGINE = ReplacingMergeTree ORDER BY (target_id, id);

-- Cached model answers: the newest row of a key wins (on reads, and in merges by its version).
CREATE TABLE IF NOT EXISTS ModelInferenceCache (
  cache_key String,
  output String,
  raw_request String,
  raw_response String,
  finish_reason Nullable(Enum8('stop' = 1, 'stop_sequence' = 2, 'length' = 3, 'tool_call' = 4, 'content_filter' = 5, 'unknown' = 6)),
  timestamp_ms UInt64
) ENGINE = ReplacingMergeTree(timestamp_ms) ORDER BY cache_key;
