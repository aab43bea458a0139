-- Batch inference (spec 4.4).
--
-- batch_requests: one row per batch. A status change upserts the whole row; it applies only
-- over an older (`updated_at`, `version`), so the newest `updated_at` wins even when two writes
-- commit out of order, and of two with the same `updated_at` the later write
-- (layers/writeVersions.ts), as on ClickHouse. The pending batches are found, oldest first, by
-- a partial index.
--
-- batch_model_inferences: one row per inference of a batch, as submitted, never changed; the
-- primary key reads a batch's inferences in input order, and the second index finds one of
-- them by (batch_id, inference_id).
--
-- JSON values are JSONB; NULL is an absent field (a JSON null is the JSONB value `null`).

CREATE TABLE batch_requests (
  id uuid PRIMARY KEY,
  function_name text NOT NULL,
  function_type text NOT NULL CHECK (function_type IN ('chat', 'json')),
  variant_name text NOT NULL,
  model_name text NOT NULL,
  model_provider_name text NOT NULL,
  provider_batch_id text NOT NULL,
  provider_batch_data jsonb NOT NULL,
  batch_params jsonb NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'completed', 'failed')),
  error_message text,
  failures jsonb,
  timestamp timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  version bigint NOT NULL
);
CREATE INDEX batch_requests_pending ON batch_requests (timestamp, id) WHERE status = 'pending';

CREATE TABLE batch_model_inferences (
  batch_id uuid NOT NULL,
  input_index integer NOT NULL CHECK (input_index >= 0),
  inference_id uuid NOT NULL,
  episode_id uuid NOT NULL,
  function_name text NOT NULL,
  variant_name text NOT NULL,
  input jsonb NOT NULL,
  system text,
  input_messages jsonb NOT NULL,
  tool_params jsonb,
  output_schema jsonb,
  inference_params jsonb NOT NULL,
  raw_request text NOT NULL,
  model_name text NOT NULL,
  model_provider_name text NOT NULL,
  tags jsonb NOT NULL,
  timestamp timestamptz NOT NULL,
  PRIMARY KEY (batch_id, input_index)
);
CREATE INDEX batch_model_inferences_inference ON batch_model_inferences (batch_id, inference_id);
