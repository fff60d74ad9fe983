-- Version 17 (PostgreSQL). Never edit a shipped migration: add a new file.
-- See sqlite/017_typed_output.sql for why.
ALTER TABLE turns ADD COLUMN output TEXT;
ALTER TABLE turns ADD COLUMN repairs INTEGER NOT NULL DEFAULT 0;
