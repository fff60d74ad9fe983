-- Version 16 (PostgreSQL). Never edit a shipped migration: add a new file.
-- See sqlite/016_edited_calls.sql for why.
CREATE INDEX calls_edited ON calls (agent_id, id) WHERE original_args IS NOT NULL;
