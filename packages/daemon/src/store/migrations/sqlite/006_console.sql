-- Version 6: what the web console needs from the store. Never edit a shipped migration: add a new file.
--
-- A person may edit a call's arguments when approving it: `args` then holds
-- what the call runs with, `original_args` what the model asked for (NULL when
-- nobody edited them), so the record keeps both.
ALTER TABLE calls ADD COLUMN original_args TEXT;

-- One-time sign-in links (`wardrik console`). Only a hash of the link's code is
-- kept; the token the link signs in with is encrypted under a key derived from
-- that code, so the database alone can never yield the token. A row is deleted
-- when it is used, and expired rows are swept when new links are made.
CREATE TABLE console_links (
  code_hash TEXT PRIMARY KEY,
  sealed_token TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX console_links_expiry ON console_links (expires_at);
