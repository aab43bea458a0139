-- Inference evaluation runs (spec 4.6). A run's record changes as the run goes on: each save
-- upserts the whole row, and a datapoint's result written again replaces the earlier one.
-- `version` orders the writes (layers/writeVersions.ts): an upsert applies only over an older
-- version, so the last save wins even when two saves commit out of order. The summary, the
-- scores and the evaluators' errors are JSONB; NULL is an absent field.

CREATE TABLE evaluation_run (
  id uuid PRIMARY KEY,
  function_name text NOT NULL,
  variant_name text NOT NULL,
  dataset_name text NOT NULL,
  evaluation_name text,
  evaluator_names text[] NOT NULL,
  datapoint_count integer NOT NULL CHECK (datapoint_count >= 0),
  status text NOT NULL CHECK (status IN ('running', 'completed', 'stopped_early', 'failed')),
  completed integer NOT NULL CHECK (completed >= 0),
  errors integer NOT NULL CHECK (errors >= 0),
  summary jsonb NOT NULL,
  started_at timestamptz NOT NULL,
  finished_at timestamptz,
  failure text,
  version bigint NOT NULL
);

-- Listings read runs newest first, of every function or of one: each walks one of these backwards.
CREATE INDEX evaluation_run_started ON evaluation_run (started_at, id);
CREATE INDEX evaluation_run_function_started ON evaluation_run (function_name, started_at, id);

CREATE TABLE evaluation_result (
  run_id uuid NOT NULL,
  datapoint_id uuid NOT NULL,
  inference_id uuid,
  scores jsonb NOT NULL,
  evaluator_errors jsonb NOT NULL,
  error text,
  timestamp timestamptz NOT NULL,
  version bigint NOT NULL,
  PRIMARY KEY (run_id, datapoint_id)
);
