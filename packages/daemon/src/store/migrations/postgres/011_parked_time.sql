-- Version 11 (PostgreSQL). Never edit a shipped migration: add a new file.
-- See sqlite/011_parked_time.sql for why.
ALTER TABLE turns ADD COLUMN parked_since_ms BIGINT;
ALTER TABLE turns ADD COLUMN parked_ms BIGINT NOT NULL DEFAULT 0;
