-- Version 14 (PostgreSQL). Never edit a shipped migration: add a new file.
-- See sqlite/014_call_worker.sql for why.
ALTER TABLE calls ADD COLUMN worker TEXT;
