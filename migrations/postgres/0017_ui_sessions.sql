-- The web UI's sessions (`POST /v1/ui/session`): the session cookie holds a random id, of which
-- only the SHA-256 is kept here, with the API key it was made for and when it ends (absolute, on
-- the database's clock, which every gateway process shares). Signing out deletes the row;
-- every request on the cookie reads it joined to its key, so that a disabled key's sessions are
-- refused at once. Expired rows and those of disabled keys are purged when someone signs in.
CREATE TABLE ui_sessions (
  id_hash bytea PRIMARY KEY,
  public_id text NOT NULL REFERENCES api_keys (public_id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
