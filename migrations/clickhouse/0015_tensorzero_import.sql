-- `gateway import-tensorzero` (layers/tensorzeroImport/): how far each stream of a TensorZero
-- database has been imported, so that a run stopped midway, or run again later, goes on from
-- there. `source` names the database read (its host, port and name, without credentials); a
-- stream's position is the row with the greatest `updated_at_ms` (read with argMax, before or
-- after merges). In the SQL both ClickHouse 18.16 and current releases accept.

CREATE TABLE IF NOT EXISTS TensorZeroImportPosition (
  source String,
  stream String,
  at_ms Float64,
  id String,
  updated_at_ms UInt64
) ENGINE = ReplacingMergeTree(updated_at_ms) ORDER BY (source, stream);
