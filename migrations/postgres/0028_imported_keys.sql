-- Keys imported from TensorZero (issue 40, `gateway import-tensorzero`): a key names who issued
-- it, `sk-gw-` keys this gateway and `sk-t0-` keys TensorZero, and authenticates only with its
-- issuer's prefix. TensorZero's public ids are mixed-case: `public_id` stays text, compared
-- case-sensitively. TensorZero keys carry a description.
ALTER TABLE api_keys ADD COLUMN issuer text NOT NULL DEFAULT 'gateway' CHECK (issuer IN ('gateway', 'tensorzero'));
ALTER TABLE api_keys ADD COLUMN description text;
