-- The cache reads the model inferences written with a cache key (an answer that may be
-- reused), so each answer is stored once. Entries of the former cache table are not carried
-- over: they hold no model inference to attach them to, and a cache may start empty.

ALTER TABLE model_inference ADD COLUMN cache_key text;
CREATE INDEX model_inference_cache_key ON model_inference (cache_key, timestamp) WHERE cache_key IS NOT NULL;
DROP TABLE model_inference_cache;
