-- The `admin` role of API keys (`--create-api-key --admin`): the web UI and its `/v1/ui/...`
-- routes, which read every tenant's data and manage keys, require it. Existing keys have no role.
ALTER TABLE api_keys ADD COLUMN admin boolean NOT NULL DEFAULT false;
