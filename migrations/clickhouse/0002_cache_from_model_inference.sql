-- The cache reads ModelInference: a model inference written with a cache key (an answer that
-- may be reused) gets a row in ModelInferenceCacheKey, filled by ClickHouse itself, which
-- points at it by its sorting key. Each answer is stored and sent once. The former
-- ModelInferenceCache (a copy of every answer) goes: a cache may start empty.

ALTER TABLE ModelInference ADD COLUMN cache_key String;

-- the newest answer of a key wins, on reads (ORDER BY timestamp_ms DESC) and in merges
CREATE TABLE IF NOT EXISTS ModelInferenceCacheKey (
  cache_key String,
  inference_id UUID,
  id UUID,
  timestamp_ms UInt64
) ENGINE = ReplacingMergeTree(timestamp_ms) ORDER BY cache_key;

CREATE MATERIALIZED VIEW IF NOT EXISTS ModelInferenceCacheKeyFill TO ModelInferenceCacheKey AS
  SELECT cache_key, inference_id, id, timestamp_ms FROM ModelInference WHERE cache_key != '';

DROP TABLE IF EXISTS ModelInferenceCache;
