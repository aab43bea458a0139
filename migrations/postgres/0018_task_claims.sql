-- When work that may run at most once per interval across every gateway process last ran
-- (src/tasks/service.ts `Tasks.claim`): one row per key, the time of its last claim. A batch's
-- provider polls are claimed here (key `batch.poll:<batch id>`), so that reads of a pending
-- batch on any number of gateways poll the provider at most once per
-- `[gateway.batch] poll_interval_s`. Rows not claimed for a long time are swept
-- (layers/tasks/pgBoss.ts).

CREATE TABLE gateway_task_claims (
  key text PRIMARY KEY,
  claimed_at timestamptz NOT NULL
);
-- the sweep of old claims
CREATE INDEX gateway_task_claims_claimed_at ON gateway_task_claims (claimed_at);
