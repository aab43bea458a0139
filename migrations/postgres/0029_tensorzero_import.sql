-- `gateway import-tensorzero` (layers/tensorzeroImport/): how far each stream of a TensorZero
-- database has been imported, so that a run stopped midway, or run again later, goes on from
-- there. `source` names the database read (its host, port and name, without credentials);
-- the position is the ordering time (epoch ms, with a fraction where the source keeps
-- microseconds) and id of the last row written.

CREATE TABLE tensorzero_import_position (
  source text NOT NULL,
  stream text NOT NULL,
  at_ms double precision NOT NULL,
  id text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (source, stream)
);
