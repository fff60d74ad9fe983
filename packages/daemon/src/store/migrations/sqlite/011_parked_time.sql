-- Version 11 (SQLite). Never edit a shipped migration: add a new file.
-- A turn's timeout counts the time it runs, not the time it waits for a person:
-- when it parks the time is noted, and when a decision resumes it the wait is
-- added to parked_ms, which moves the turn's deadline.
ALTER TABLE turns ADD COLUMN parked_since_ms INTEGER;
ALTER TABLE turns ADD COLUMN parked_ms INTEGER NOT NULL DEFAULT 0;
