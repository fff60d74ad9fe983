-- OAuth grants for remote MCP servers, one per org and server: the client
-- registration, the access and refresh tokens and a login in progress, as one
-- AES-256-GCM ciphertext sealed with the secrets' key ring and bound to the
-- row's org and server (never plain text in the database).
CREATE TABLE mcp_grants (
  org TEXT NOT NULL,
  server TEXT NOT NULL,
  ciphertext TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (org, server)
);
