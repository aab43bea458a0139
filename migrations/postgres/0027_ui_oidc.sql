-- Single sign-on for the web UI (issue 39, OpenID Connect: src/auth/oidcRules.ts, layers/http/uiOidc.ts): a session is now
-- of an API key (as before) or of an identity the identity provider vouched for, mapped by the
-- `[[gateway.ui.oidc.rules]]` to a workspace and a role; exactly one of the two is set.
ALTER TABLE ui_sessions ALTER COLUMN public_id DROP NOT NULL;
ALTER TABLE ui_sessions ADD COLUMN oidc_subject text;
ALTER TABLE ui_sessions ADD COLUMN oidc_email text;
ALTER TABLE ui_sessions ADD COLUMN workspace text;
ALTER TABLE ui_sessions ADD COLUMN role text CHECK (role IN ('admin', 'viewer'));
ALTER TABLE ui_sessions ADD CONSTRAINT ui_sessions_one_principal CHECK (
  (public_id IS NULL) <> (oidc_subject IS NULL)
  AND (oidc_subject IS NULL) = (workspace IS NULL)
  AND (oidc_subject IS NULL) = (role IS NULL)
);

-- A sign-in under way: written by `GET /v1/ui/oidc/start`, taken (deleted, so used once) by the
-- callback, which any gateway on the database may serve. Only hashes of the state and of the
-- browser's binding cookie are kept; the verifier and nonce are useless without the code, which
-- only the browser's redirect carries. Rows that outlive `expires_at` are purged at each start.
CREATE TABLE ui_oidc_logins (
  state_hash bytea PRIMARY KEY,
  binding_hash bytea NOT NULL,
  code_verifier text NOT NULL,
  nonce text NOT NULL,
  return_to text NOT NULL,
  expires_at timestamptz NOT NULL
);

-- the audit log names a single sign-on identity as its actor
ALTER TABLE audit_log DROP CONSTRAINT audit_log_actor_kind_check;
ALTER TABLE audit_log ADD CONSTRAINT audit_log_actor_kind_check
  CHECK (actor_kind IN ('api_key', 'ui_session', 'oidc', 'cli', 'open'));
