-- Adaptive experimentation (src/experimentation/): each computation of a function's sampling
-- probabilities. Rows are never changed; reads take the newest ids (UUIDv7: time order) of a
-- (function, settings) pair through the index. `config_key` names the settings it was computed
-- under, so a changed experiment starts afresh. `sampling`: the probabilities, the per-variant
-- statistics and whether the experiment stopped. 0012 is another migration's.

CREATE TABLE variant_sampling (
  id uuid PRIMARY KEY,
  function_name text NOT NULL,
  config_key text NOT NULL,
  computed_at timestamptz NOT NULL,
  sampling jsonb NOT NULL
);
CREATE INDEX variant_sampling_latest ON variant_sampling (function_name, config_key, id DESC);
