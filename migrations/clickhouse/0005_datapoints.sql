-- Datapoints (spec 2.5, 3, 4.5), in the SQL both ClickHouse 18.16 and current releases accept.
-- A datapoint version is immutable but for its name and its staling. ClickHouse cannot update
-- a row in place, so a rename or a staling writes the whole row again under the same id with a
-- higher `version`; reads take the newest version of each id (ORDER BY version DESC LIMIT 1 BY
-- id), and merges keep it. Sorted by dataset, so that a dataset's datapoints are contiguous.
-- JSON values are kept as String; NULL is an absent field. `timestamp_ms` is the time of the
-- id (a UUIDv7); `search_text` is the lower-cased text search_relevance ranks by.

CREATE TABLE IF NOT EXISTS Datapoint (
  dataset_name String,
  id UUID,
  function_name String,
  function_type Enum8('chat' = 1, 'json' = 2),
  input String,
  output Nullable(String),
  episode_id Nullable(UUID),
  tags Nested(key String, value String),
  name Nullable(String),
  tool_params Nullable(String),
  output_schema Nullable(String),
  source_inference_id Nullable(UUID),
  is_custom UInt8,
  staled_at_ms Nullable(UInt64),
  updated_at_ms UInt64,
  search_text String,
  timestamp_ms UInt64,
  version UInt64
) ENGINE = ReplacingMergeTree(version) ORDER BY (dataset_name, id);
