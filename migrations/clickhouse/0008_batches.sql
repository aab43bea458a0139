-- Batch inference (spec 4.4), in the SQL both ClickHouse 18.16 and current releases accept.
--
-- BatchRequest: one row per version of a batch. A status change writes the whole row again
-- under the same id with a newer `updated_at_ms`; reads take the newest version of each id
-- (ORDER BY updated_at_ms DESC, version DESC LIMIT 1 BY id) and merges keep it. Of two
-- versions with the same `updated_at_ms`, the later write wins: reads by `version`
-- (layers/writeVersions.ts), merges by keeping the last inserted. Status and function type are
-- Enum8 (18.16 has LowCardinality only behind an experimental setting), so a status outside
-- the three is refused.
--
-- BatchModelInference: one row per inference of a batch, as submitted, never changed. Sorted
-- by (batch_id, input_index): a batch's inferences are contiguous and in input order, and the
-- lookup of one of them by (batch_id, inference_id) reads only its batch's granules. A row
-- written twice (a retried insert) collapses into one, and reads dedupe with LIMIT 1 BY
-- input_index meanwhile.
--
-- JSON values are String; NULL is an absent field. Times are epoch milliseconds.

CREATE TABLE IF NOT EXISTS BatchRequest (
  id UUID,
  function_name String,
  function_type Enum8('chat' = 1, 'json' = 2),
  variant_name String,
  model_name String,
  model_provider_name String,
  provider_batch_id String,
  provider_batch_data String,
  batch_params String,
  status Enum8('pending' = 1, 'completed' = 2, 'failed' = 3),
  error_message Nullable(String),
  failures Nullable(String),
  timestamp_ms UInt64,
  updated_at_ms UInt64,
  version UInt64
) ENGINE = ReplacingMergeTree(updated_at_ms) ORDER BY id;

CREATE TABLE IF NOT EXISTS BatchModelInference (
  batch_id UUID,
  input_index UInt32,
  inference_id UUID,
  episode_id UUID,
  function_name String,
  variant_name String,
  input String,
  system Nullable(String),
  input_messages String,
  tool_params Nullable(String),
  output_schema Nullable(String),
  inference_params String,
  raw_request String,
  model_name String,
  model_provider_name String,
  tags Nested(key String, value String),
  timestamp_ms UInt64
) ENGINE = ReplacingMergeTree ORDER BY (batch_id, input_index);
