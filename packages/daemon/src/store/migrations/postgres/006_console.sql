-- Version 6 (PostgreSQL): see sqlite/006_console.sql for why each change is made.
ALTER TABLE calls ADD COLUMN original_args TEXT;

CREATE TABLE console_links (
  code_hash TEXT PRIMARY KEY,
  sealed_token TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX console_links_expiry ON console_links (expires_at);
