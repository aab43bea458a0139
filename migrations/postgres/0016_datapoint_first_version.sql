-- The id of a datapoint's first version on each of its later versions (NULL on a first version,
-- and on versions written before this column): what ties the versions of one datapoint together,
-- so that its history (the UI's datapoint page) is one indexed read.

ALTER TABLE datapoint ADD COLUMN first_version_id uuid;
CREATE INDEX datapoint_first_version ON datapoint (first_version_id) WHERE first_version_id IS NOT NULL;
