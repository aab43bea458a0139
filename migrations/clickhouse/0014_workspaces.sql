-- Workspaces (issue 39): every row a request stores carries the workspace of the key that made
-- it; reads filter on it. Rows stored before are in `default`. No sort key changes (18.16 cannot
-- change one, and none needs to: every key ends in a gateway-made UUID, unique across
-- workspaces). The by-id and by-episode tables (InferenceById, InferenceByEpisodeId) are not
-- changed: a row found there is checked against its main table's workspace. The cache's key
-- table needs nothing: the workspace is part of the hashed cache key.

ALTER TABLE ChatInference ADD COLUMN workspace String DEFAULT 'default';
ALTER TABLE JsonInference ADD COLUMN workspace String DEFAULT 'default';
ALTER TABLE ModelInference ADD COLUMN workspace String DEFAULT 'default';
ALTER TABLE BooleanMetricFeedback ADD COLUMN workspace String DEFAULT 'default';
ALTER TABLE FloatMetricFeedback ADD COLUMN workspace String DEFAULT 'default';
ALTER TABLE CommentFeedback ADD COLUMN workspace String DEFAULT 'default';
ALTER TABLE DemonstrationFeedback ADD COLUMN workspace String DEFAULT 'default';
ALTER TABLE EmbeddingInference ADD COLUMN workspace String DEFAULT 'default';
ALTER TABLE Datapoint ADD COLUMN workspace String DEFAULT 'default';
ALTER TABLE EvaluationRun ADD COLUMN workspace String DEFAULT 'default';
ALTER TABLE EvaluationResult ADD COLUMN workspace String DEFAULT 'default';
ALTER TABLE WorkflowEvaluationRun ADD COLUMN workspace String DEFAULT 'default';
ALTER TABLE WorkflowEvaluationRunEpisode ADD COLUMN workspace String DEFAULT 'default';
ALTER TABLE BatchRequest ADD COLUMN workspace String DEFAULT 'default';
ALTER TABLE BatchModelInference ADD COLUMN workspace String DEFAULT 'default';
ALTER TABLE DiclExample ADD COLUMN workspace String DEFAULT 'default';
ALTER TABLE DiclWrite ADD COLUMN workspace String DEFAULT 'default';
ALTER TABLE ResponseDeletion ADD COLUMN workspace String DEFAULT 'default';
