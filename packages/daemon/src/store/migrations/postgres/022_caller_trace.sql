-- Version 22 (PostgreSQL). Never edit a shipped migration: add a new file.
-- See sqlite/022_caller_trace.sql for why.
ALTER TABLE inputs ADD COLUMN caller_trace TEXT;
