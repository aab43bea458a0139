-- Budgets set at run time (issue 39, src/budgets/runtime.ts): an admin's spend limit per API key,
-- workspace or tag of a workspace, per period, through /v1/budgets. One row per (workspace,
-- scope, period): a PUT upserts it. A workspace scope has no key nor value, an API key scope no
-- key: they are '' (not NULL) so that the unique constraint holds for them too.
-- `budgets_version` is one row bumped by a trigger on every change: each gateway polls it (cheap,
-- and it works behind PgBouncer, where LISTEN does not) and reads the table again when it moved.

CREATE TABLE budgets (
  id uuid PRIMARY KEY,
  workspace text NOT NULL,
  scope_kind text NOT NULL CHECK (scope_kind IN ('api_key', 'workspace', 'tag')),
  scope_key text NOT NULL DEFAULT '',
  scope_value text NOT NULL DEFAULT '',
  period text NOT NULL CHECK (period IN ('day', 'week', 'month', 'total')),
  limit_amount double precision NOT NULL CHECK (limit_amount >= 0),
  updated_at timestamptz NOT NULL DEFAULT now(),
  updated_by text,
  UNIQUE (workspace, scope_kind, scope_key, scope_value, period)
);

CREATE TABLE budgets_version (
  single boolean PRIMARY KEY DEFAULT true CHECK (single),
  version bigint NOT NULL
);
INSERT INTO budgets_version (single, version) VALUES (true, 0);

CREATE FUNCTION gateway_budgets_bump_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE budgets_version SET version = version + 1;
  RETURN NULL;
END
$$;

-- per row, so that a statement that changed nothing (a DELETE of no row) does not make every gateway read again
CREATE TRIGGER budgets_bump_version AFTER INSERT OR UPDATE OR DELETE ON budgets
  FOR EACH ROW EXECUTE FUNCTION gateway_budgets_bump_version();
CREATE TRIGGER budgets_bump_version_truncate AFTER TRUNCATE ON budgets
  FOR EACH STATEMENT EXECUTE FUNCTION gateway_budgets_bump_version();
