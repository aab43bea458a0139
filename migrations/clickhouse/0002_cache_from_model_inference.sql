-- The cache is filled from ModelInference: a model inference written with a cache key (an
-- answer that may be reused) is copied into ModelInferenceCache by ClickHouse itself, so the
-- gateway sends each answer once. Rows written before this migration have an empty key.

ALTER TABLE ModelInference ADD COLUMN cache_key String;

CREATE MATERIALIZED VIEW IF NOT EXISTS ModelInferenceCacheFill TO ModelInferenceCache AS
  SELECT cache_key, output, raw_request, raw_response, finish_reason, timestamp_ms
  FROM ModelInference WHERE cache_key != '';
