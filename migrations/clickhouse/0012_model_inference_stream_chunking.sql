-- How the stream of a cached answer was cut (src/inference/chunks.ts: per chunk, its deltas as
-- the block and lengths they took), written with the cache key of an answer its provider
-- streamed, so that a streamed cache hit replays the answer as it came. '' when none.

ALTER TABLE ModelInference ADD COLUMN stream_chunking String;
