-- Examples of dynamic in-context learning variants, in the SQL both ClickHouse 18.16 and
-- current releases accept (layers/clickhouse/dicl.ts).
--
-- DiclExample: one row per example, staged under the id of the write that made it. An
-- embedding is an Array(Float32) with its euclidean norm (computed by the gateway from the
-- float32 values): the cosine distance to a query is 1 - dot / (norm * query norm), the dot
-- product an arraySum of an arrayMap (18.16 has no cosineDistance). Sorted by (function,
-- variant, write): a variant's examples are contiguous. A row staged twice (a retried insert)
-- collapses into one, and reads dedupe by id meanwhile.
--
-- DiclWrite: one row per committed write. Readers take the variant's committed writes from its
-- latest committed replace on; rows of writes that are not committed are never read. After a
-- replace commits, the rows before it are deleted by a mutation.
--
-- JSON values are String; times are epoch milliseconds.

CREATE TABLE IF NOT EXISTS DiclExample (
  function_name String,
  variant_name String,
  write_id UInt64,
  id UUID,
  input String,
  output String,
  embedding Array(Float32),
  embedding_norm Float64,
  embedding_model String,
  created_at_ms UInt64
) ENGINE = ReplacingMergeTree ORDER BY (function_name, variant_name, write_id, id);

CREATE TABLE IF NOT EXISTS DiclWrite (
  function_name String,
  variant_name String,
  write_id UInt64,
  mode Enum8('append' = 1, 'replace' = 2),
  committed_at_ms UInt64
) ENGINE = ReplacingMergeTree ORDER BY (function_name, variant_name, write_id);
