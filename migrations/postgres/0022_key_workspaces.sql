-- Workspaces (issue 39): every API key belongs to one workspace; keys made before this change
-- land in `default`, admins among them as admins of `default` (not global). A global admin acts
-- on any workspace and must be an admin.
ALTER TABLE api_keys ADD COLUMN workspace text NOT NULL DEFAULT 'default';
ALTER TABLE api_keys ADD COLUMN global_admin boolean NOT NULL DEFAULT false;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_global_admin_is_admin CHECK (NOT global_admin OR admin);
CREATE INDEX api_keys_workspace_created ON api_keys (workspace, created_at DESC);
