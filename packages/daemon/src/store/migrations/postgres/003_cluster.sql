-- Cluster ownership, version 3 (PostgreSQL). Never edit a shipped migration: add a new file.
-- See sqlite/003_cluster.sql for why.
ALTER TABLE agents ADD COLUMN owner_node TEXT;
ALTER TABLE agents ADD COLUMN lease_token BIGINT NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN lease_expires BIGINT NOT NULL DEFAULT 0;
CREATE INDEX agents_owner ON agents (owner_node);

CREATE TABLE nodes (
  name TEXT PRIMARY KEY,
  url TEXT NOT NULL,
  pid INTEGER NOT NULL,
  host TEXT NOT NULL,
  started_at TEXT NOT NULL,
  heartbeat_at BIGINT NOT NULL
);

CREATE TABLE worker_tools (
  node TEXT NOT NULL,
  org TEXT NOT NULL,
  tool TEXT NOT NULL,
  descriptor TEXT NOT NULL,
  PRIMARY KEY (node, org, tool)
);

CREATE TABLE cluster_secrets (
  id INTEGER PRIMARY KEY,
  secret TEXT NOT NULL
);
