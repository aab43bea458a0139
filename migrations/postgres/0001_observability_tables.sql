-- The observability tables (spec 2.10). Ids are UUIDv7, so ordering by id is ordering by time
-- (lists are newest first by id); `timestamp` is the time the id carries, kept for time filters.
-- JSON values are JSONB. Statements end with a semicolon at the end of a line.

CREATE TABLE chat_inference (
  id uuid PRIMARY KEY,
  function_name text NOT NULL,
  variant_name text NOT NULL,
  episode_id uuid NOT NULL,
  input jsonb NOT NULL,
  output jsonb NOT NULL,
  tool_params jsonb,
  inference_params jsonb NOT NULL,
  processing_time_ms double precision NOT NULL,
  ttft_ms double precision,
  tags jsonb NOT NULL,
  timestamp timestamptz NOT NULL
);
CREATE INDEX chat_inference_function_id ON chat_inference (function_name, id);
CREATE INDEX chat_inference_episode ON chat_inference (episode_id);

CREATE TABLE json_inference (
  id uuid PRIMARY KEY,
  function_name text NOT NULL,
  variant_name text NOT NULL,
  episode_id uuid NOT NULL,
  input jsonb NOT NULL,
  output jsonb NOT NULL,
  output_schema jsonb,
  inference_params jsonb NOT NULL,
  processing_time_ms double precision NOT NULL,
  ttft_ms double precision,
  tags jsonb NOT NULL,
  timestamp timestamptz NOT NULL
);
CREATE INDEX json_inference_function_id ON json_inference (function_name, id);
CREATE INDEX json_inference_episode ON json_inference (episode_id);

CREATE TABLE model_inference (
  id uuid PRIMARY KEY,
  inference_id uuid NOT NULL,
  model_name text NOT NULL,
  model_provider_name text NOT NULL,
  raw_request text NOT NULL,
  raw_response text NOT NULL,
  system text,
  input_messages jsonb NOT NULL,
  output jsonb NOT NULL,
  input_tokens integer NOT NULL,
  output_tokens integer NOT NULL,
  response_time_ms double precision NOT NULL,
  ttft_ms double precision,
  finish_reason text,
  cached boolean NOT NULL,
  timestamp timestamptz NOT NULL
);
CREATE INDEX model_inference_inference ON model_inference (inference_id);

-- Feedback: one table per kind, each with the metric name, the target (an inference or an
-- episode) and a value of the kind's type.
CREATE TABLE boolean_metric_feedback (
  id uuid PRIMARY KEY,
  target_id uuid NOT NULL,
  target_type text NOT NULL CHECK (target_type IN ('inference', 'episode')),
  metric_name text NOT NULL,
  value boolean NOT NULL,
  tags jsonb NOT NULL,
  timestamp timestamptz NOT NULL
);
CREATE INDEX boolean_metric_feedback_target ON boolean_metric_feedback (target_id);

CREATE TABLE float_metric_feedback (
  id uuid PRIMARY KEY,
  target_id uuid NOT NULL,
  target_type text NOT NULL CHECK (target_type IN ('inference', 'episode')),
  metric_name text NOT NULL,
  value double precision NOT NULL,
  tags jsonb NOT NULL,
  timestamp timestamptz NOT NULL
);
CREATE INDEX float_metric_feedback_target ON float_metric_feedback (target_id);

CREATE TABLE comment_feedback (
  id uuid PRIMARY KEY,
  target_id uuid NOT NULL,
  target_type text NOT NULL CHECK (target_type IN ('inference', 'episode')),
  metric_name text NOT NULL,
  value text NOT NULL,
  tags jsonb NOT NULL,
  timestamp timestamptz NOT NULL
);
CREATE INDEX comment_feedback_target ON comment_feedback (target_id);

CREATE TABLE demonstration_feedback (
  id uuid PRIMARY KEY,
  target_id uuid NOT NULL,
  target_type text NOT NULL CHECK (target_type IN ('inference', 'episode')),
  metric_name text NOT NULL,
  value jsonb NOT NULL,
  tags jsonb NOT NULL,
  timestamp timestamptz NOT NULL
);
CREATE INDEX demonstration_feedback_target ON demonstration_feedback (target_id);

-- Cached model answers: one row per key, the newest written wins.
CREATE TABLE model_inference_cache (
  key text PRIMARY KEY,
  output jsonb NOT NULL,
  raw_request text NOT NULL,
  raw_response text NOT NULL,
  finish_reason text,
  timestamp timestamptz NOT NULL
);
