-- The id of a datapoint's first version on each of its later versions (NULL on a first version,
-- and on versions written before this column): what ties the versions of one datapoint together,
-- so that its history (the UI's datapoint page) is one read of the dataset's rows.

ALTER TABLE Datapoint ADD COLUMN first_version_id Nullable(UUID);
