-- Workspaces (issue 39): every row a request stores carries the workspace of the key that made
-- it; reads filter on it. Rows stored before are in `default` (a column with a constant default
-- is added without rewriting the table). Indexes that list by name or time lead with the
-- workspace, so that two workspaces' datasets of one name, or their runs, are read apart; keys
-- of gateway-made ids stay as they are (unique across workspaces), but DICL's write ids are only
-- unique per process, so the workspace joins their keys.

ALTER TABLE chat_inference ADD COLUMN workspace text NOT NULL DEFAULT 'default';
ALTER TABLE json_inference ADD COLUMN workspace text NOT NULL DEFAULT 'default';
DROP INDEX chat_inference_function_id;
DROP INDEX json_inference_function_id;
CREATE INDEX chat_inference_workspace_function_id ON chat_inference (workspace, function_name, id);
CREATE INDEX json_inference_workspace_function_id ON json_inference (workspace, function_name, id);
CREATE INDEX chat_inference_workspace_id ON chat_inference (workspace, id);
CREATE INDEX json_inference_workspace_id ON json_inference (workspace, id);

ALTER TABLE model_inference ADD COLUMN workspace text NOT NULL DEFAULT 'default';
ALTER TABLE boolean_metric_feedback ADD COLUMN workspace text NOT NULL DEFAULT 'default';
ALTER TABLE float_metric_feedback ADD COLUMN workspace text NOT NULL DEFAULT 'default';
ALTER TABLE comment_feedback ADD COLUMN workspace text NOT NULL DEFAULT 'default';
ALTER TABLE demonstration_feedback ADD COLUMN workspace text NOT NULL DEFAULT 'default';
ALTER TABLE embedding_inference ADD COLUMN workspace text NOT NULL DEFAULT 'default';

ALTER TABLE datapoint ADD COLUMN workspace text NOT NULL DEFAULT 'default';
DROP INDEX datapoint_live;
DROP INDEX datapoint_live_function;
CREATE INDEX datapoint_live ON datapoint (workspace, dataset_name, id) WHERE staled_at IS NULL;
CREATE INDEX datapoint_live_function ON datapoint (workspace, dataset_name, function_name, id) WHERE staled_at IS NULL;

ALTER TABLE evaluation_run ADD COLUMN workspace text NOT NULL DEFAULT 'default';
ALTER TABLE evaluation_result ADD COLUMN workspace text NOT NULL DEFAULT 'default';
DROP INDEX evaluation_run_started;
DROP INDEX evaluation_run_function_started;
CREATE INDEX evaluation_run_started ON evaluation_run (workspace, started_at, id);
CREATE INDEX evaluation_run_function_started ON evaluation_run (workspace, function_name, started_at, id);

ALTER TABLE workflow_evaluation_run ADD COLUMN workspace text NOT NULL DEFAULT 'default';
ALTER TABLE workflow_evaluation_run_episode ADD COLUMN workspace text NOT NULL DEFAULT 'default';
DROP INDEX workflow_evaluation_run_project;
CREATE INDEX workflow_evaluation_run_project ON workflow_evaluation_run (workspace, project_name, id);
CREATE INDEX workflow_evaluation_run_workspace ON workflow_evaluation_run (workspace, id);

ALTER TABLE batch_requests ADD COLUMN workspace text NOT NULL DEFAULT 'default';
ALTER TABLE batch_model_inferences ADD COLUMN workspace text NOT NULL DEFAULT 'default';

ALTER TABLE dicl_write ADD COLUMN workspace text NOT NULL DEFAULT 'default';
ALTER TABLE dicl_write DROP CONSTRAINT dicl_write_pkey, ADD PRIMARY KEY (workspace, function_name, variant_name, write_id);
ALTER TABLE dicl_example ADD COLUMN workspace text NOT NULL DEFAULT 'default';
ALTER TABLE dicl_example DROP CONSTRAINT dicl_example_pkey, ADD PRIMARY KEY (workspace, function_name, variant_name, write_id, id);

ALTER TABLE response_deletion ADD COLUMN workspace text NOT NULL DEFAULT 'default';

-- A gateway of the version before, still running during a rolling upgrade, writes rows without
-- the column (its inserts name every column, the new one as NULL): they land in `default`
-- instead of failing. NOT NULL is checked after this trigger.
CREATE FUNCTION gateway_default_workspace() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.workspace IS NULL THEN
    NEW.workspace := 'default';
  END IF;
  RETURN NEW;
END
$$;

DO $$
DECLARE
  written text;
BEGIN
  FOREACH written IN ARRAY ARRAY[
    'chat_inference', 'json_inference', 'model_inference', 'boolean_metric_feedback', 'float_metric_feedback',
    'comment_feedback', 'demonstration_feedback', 'embedding_inference', 'datapoint', 'evaluation_run',
    'evaluation_result', 'workflow_evaluation_run', 'workflow_evaluation_run_episode', 'batch_requests',
    'batch_model_inferences', 'dicl_write', 'dicl_example', 'response_deletion'
  ] LOOP
    EXECUTE format(
      'CREATE TRIGGER %I BEFORE INSERT ON %I FOR EACH ROW WHEN (NEW.workspace IS NULL) EXECUTE FUNCTION gateway_default_workspace()',
      written || '_default_workspace', written
    );
  END LOOP;
END
$$;
