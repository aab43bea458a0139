-- Embeddings calls (POST /openai/v1/embeddings), one row each; the cache finds the newest
-- answer written under a key. The version leaves room for the migrations of other work in flight.

CREATE TABLE embedding_inference (
  id uuid PRIMARY KEY,
  model_name text NOT NULL,
  model_provider_name text NOT NULL,
  input jsonb NOT NULL,
  dimensions integer,
  raw_request text NOT NULL,
  raw_response text NOT NULL,
  input_tokens integer NOT NULL,
  response_time_ms double precision NOT NULL,
  cached boolean NOT NULL,
  cache_key text,
  tags jsonb NOT NULL,
  timestamp timestamptz NOT NULL
);
CREATE INDEX embedding_inference_cache_key ON embedding_inference (cache_key, timestamp) WHERE cache_key IS NOT NULL;
