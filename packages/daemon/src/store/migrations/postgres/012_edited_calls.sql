-- Version 12 (PostgreSQL). Never edit a shipped migration: add a new file.
-- See sqlite/012_edited_calls.sql for why.
CREATE INDEX calls_edited ON calls (agent_id, id) WHERE original_args IS NOT NULL;
