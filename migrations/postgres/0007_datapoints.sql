-- Datapoints (spec 2.5, 3, 4.5). A datapoint version is immutable but for its name and its
-- staling, both updated in place; a stale version stays readable by id and is never listed.
-- Ids are UUIDv7, so ordering by id is ordering by time; `timestamp` is the time the id carries,
-- kept for time filters. JSON values are JSONB; NULL is an absent field (a JSON null is 'null').
-- `search_text` is the lower-cased text search_relevance ranks by.

CREATE TABLE datapoint (
  id uuid PRIMARY KEY,
  dataset_name text NOT NULL,
  function_name text NOT NULL,
  function_type text NOT NULL CHECK (function_type IN ('chat', 'json')),
  input jsonb NOT NULL,
  output jsonb,
  episode_id uuid,
  tags jsonb NOT NULL,
  name text,
  tool_params jsonb,
  output_schema jsonb,
  source_inference_id uuid,
  is_custom boolean NOT NULL,
  staled_at timestamptz,
  updated_at timestamptz NOT NULL,
  search_text text NOT NULL,
  timestamp timestamptz NOT NULL
);

-- Listings read a dataset's live datapoints newest first (or by id after a key), with or
-- without a function: both walk one of these backwards and stop after the page.
CREATE INDEX datapoint_live ON datapoint (dataset_name, id) WHERE staled_at IS NULL;
CREATE INDEX datapoint_live_function ON datapoint (dataset_name, function_name, id) WHERE staled_at IS NULL;
