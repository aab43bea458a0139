-- Embeddings calls (POST /openai/v1/embeddings), one row each, in SQL both ClickHouse 18.16 and
-- current releases accept. Sorted by cache key so that the cache finds the newest answer of a
-- key by its prefix; `cache_key` is '' for an answer that is not to be reused. The version
-- leaves room for the migrations of other work in flight.

CREATE TABLE IF NOT EXISTS EmbeddingInference (
  id UUID,
  model_name String,
  model_provider_name String,
  input String,
  dimensions Nullable(UInt32),
  raw_request String,
  raw_response String,
  input_tokens UInt32,
  response_time_ms UInt32,
  cached UInt8,
  cache_key String,
  tags Nested(key String, value String),
  timestamp_ms UInt64
) ENGINE = ReplacingMergeTree ORDER BY (cache_key, id);
