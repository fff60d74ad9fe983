-- Version 9 (PostgreSQL). Never edit a shipped migration: add a new file.
-- See sqlite/009_turn_trace.sql for why.
ALTER TABLE turns ADD COLUMN trace_context TEXT;
