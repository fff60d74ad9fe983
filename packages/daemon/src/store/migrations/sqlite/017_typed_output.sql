-- Version 17 (SQLite). Never edit a shipped migration: add a new file.
-- An agent with an `output` schema ends its turns with JSON that fits it:
-- `output` keeps that JSON (the HTTP API shows it parsed), `repairs` how many
-- times the model was asked to fix a reply that did not fit, so a restart
-- does not give a turn its repairs again.
ALTER TABLE turns ADD COLUMN output TEXT;
ALTER TABLE turns ADD COLUMN repairs INTEGER NOT NULL DEFAULT 0;
