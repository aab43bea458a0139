-- Adaptive experimentation (src/experimentation/): each computation of a function's sampling
-- probabilities, in the SQL both ClickHouse 18.16 and current releases accept. Rows are never
-- changed; reads take the newest ids of a (function, settings) pair. `config_key` names the
-- settings it was computed under, so a changed experiment starts afresh. `sampling` is the JSON
-- of the probabilities, the per-variant statistics and whether the experiment stopped, as text:
-- exact for every float, whatever 18.16 makes of decimal floats. 0009 is another migration's.

CREATE TABLE IF NOT EXISTS VariantSampling (
  function_name String,
  config_key String,
  id UUID,
  computed_at_ms UInt64,
  sampling String
) ENGINE = ReplacingMergeTree ORDER BY (function_name, config_key, id);
