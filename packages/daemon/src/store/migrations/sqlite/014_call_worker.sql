-- Version 14 (SQLite). Never edit a shipped migration: add a new file.
-- The worker process a call was last sent to (JSON: name, instance, node), so
-- that a person asked about a call whose answer was lost learns where it ran.
ALTER TABLE calls ADD COLUMN worker TEXT;
