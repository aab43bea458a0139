-- What a model call cost (the provider's `cost` rules applied to its raw usage; NULL when the
-- provider has none or reported nothing they read) and the input tokens it read from the
-- provider's prompt cache (NULL when the provider does not say). double precision, as on
-- ClickHouse: read back as a JSON number, not numeric's string.

ALTER TABLE model_inference ADD COLUMN cost double precision;
ALTER TABLE model_inference ADD COLUMN cached_input_tokens integer;
