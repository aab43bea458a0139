-- Stored responses of the OpenAI Responses surface (src/openaiResponses/): a deleted response is
-- marked here, its inference rows left as they are (they stay ordinary inferences for feedback
-- and datasets).

CREATE TABLE response_deletion (
  inference_id uuid PRIMARY KEY,
  deleted_at timestamptz NOT NULL
);
