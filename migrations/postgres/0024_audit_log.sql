-- The audit log (issue 39, src/audit/): every administrative act, with who (an API key, the UI's
-- session of one, the command line), what, when, from where and how it ended. Append-only from
-- the gateway's side: UPDATE, DELETE and TRUNCATE are refused by triggers (a database owner can
-- still drop them; the log protects against the gateway, not against its database's owner).

CREATE TABLE audit_log (
  id uuid PRIMARY KEY,
  occurred_at timestamptz NOT NULL DEFAULT now(),
  workspace text NOT NULL,
  actor_kind text NOT NULL CHECK (actor_kind IN ('api_key', 'ui_session', 'cli', 'open')),
  actor text,
  action text NOT NULL,
  target text,
  outcome text NOT NULL CHECK (outcome IN ('success', 'failure')),
  status integer,
  address text,
  details jsonb NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX audit_log_workspace_id ON audit_log (workspace, id DESC);

CREATE FUNCTION gateway_audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the audit log is append-only: % is refused', TG_OP;
END
$$;

CREATE TRIGGER audit_log_no_update BEFORE UPDATE OR DELETE ON audit_log
  FOR EACH ROW EXECUTE FUNCTION gateway_audit_log_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
  FOR EACH STATEMENT EXECUTE FUNCTION gateway_audit_log_append_only();
