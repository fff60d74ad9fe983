-- Version 18 (PostgreSQL). Never edit a shipped migration: add a new file.
-- See sqlite/018_sub_agents.sql for why.
ALTER TABLE inputs ADD COLUMN parent_call TEXT;
CREATE INDEX inputs_parent_call ON inputs (parent_call) WHERE parent_call IS NOT NULL;
CREATE INDEX inputs_child_run ON inputs (run) WHERE parent_call IS NOT NULL;
