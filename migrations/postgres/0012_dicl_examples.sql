-- Examples of dynamic in-context learning variants (layers/postgres/dicl.ts).
--
-- dicl_example: one row per example, staged under the id of the write that made it, keyed by
-- (function, variant, write, id): a variant's rows are found by the key's prefix, and a row
-- staged twice (a retried insert) is stored once. Where the pgvector extension is available
-- (and may be created), the embedding is a `vector` and `nearest` ranks with its cosine
-- distance operator `<=>`; otherwise it is a `double precision[]` and the cosine distance is
-- computed in SQL. The column's type says which (the gateway reads it, and /status shows it).
-- No approximate index: its vectors must all have one dimension, and a variant's examples are
-- ranked exactly, found through the key.
--
-- dicl_write: one row per committed write. Readers take the variant's committed writes from its
-- latest committed replace on; rows of writes that are not committed are never read. A replace
-- deletes the rows before it in the transaction that commits it.
--
-- JSON values are JSONB.

CREATE TABLE dicl_write (
  function_name text NOT NULL,
  variant_name text NOT NULL,
  write_id bigint NOT NULL,
  mode text NOT NULL CHECK (mode IN ('append', 'replace')),
  committed_at timestamptz NOT NULL,
  PRIMARY KEY (function_name, variant_name, write_id)
);

-- pgvector when it is installed on the server and this role may create it; float arrays otherwise
DO $$
DECLARE
  embedding_type text := 'double precision[]';
BEGIN
  IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') THEN
    BEGIN
      CREATE EXTENSION IF NOT EXISTS vector;
      embedding_type := 'vector';
    EXCEPTION WHEN OTHERS THEN
      RAISE NOTICE 'pgvector could not be created (%): DICL examples rank by cosine distance on float arrays', SQLERRM;
    END;
  END IF;
  EXECUTE format(
    'CREATE TABLE dicl_example (
      function_name text NOT NULL,
      variant_name text NOT NULL,
      write_id bigint NOT NULL,
      id uuid NOT NULL,
      input jsonb NOT NULL,
      output jsonb NOT NULL,
      embedding %s NOT NULL,
      embedding_norm double precision NOT NULL,
      embedding_model text NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (function_name, variant_name, write_id, id)
    )',
    embedding_type
  );
END
$$;
