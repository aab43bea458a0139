-- What a model call cost (the provider's `cost` rules applied to its raw usage; NULL when the
-- provider has none or reported nothing they read) and the input tokens it read from the
-- provider's prompt cache (NULL when the provider does not say). Float64: a cost is a sum of
-- products of prices (negative ones allowed) and counts, read back as a JSON number.

ALTER TABLE ModelInference ADD COLUMN cost Nullable(Float64);
ALTER TABLE ModelInference ADD COLUMN cached_input_tokens Nullable(UInt32);
