-- Stored responses of the OpenAI Responses surface (src/openaiResponses/): a deleted response is
-- marked here, its inference rows left as they are (they stay ordinary inferences for feedback
-- and datasets). Marking one twice leaves one row after merges; reads ask only whether an id is
-- here. In the SQL both ClickHouse 18.16 and current releases accept.

CREATE TABLE IF NOT EXISTS ResponseDeletion (
  inference_id UUID,
  deleted_at_ms UInt64
) ENGINE = ReplacingMergeTree ORDER BY inference_id;
