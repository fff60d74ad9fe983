-- Cluster ownership, version 3. Never edit a shipped migration: add a new file.
--
-- Each awake agent is owned by one node through a lease: the node's name,
-- when the lease ends (epoch milliseconds, by the database's clock), and a
-- fencing token that grows with every new owner. Every write for an agent
-- checks the token in the same statement that hands out its sequence
-- numbers, so a node that lost its lease can no longer commit for it.
ALTER TABLE agents ADD COLUMN owner_node TEXT;
ALTER TABLE agents ADD COLUMN lease_token INTEGER NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN lease_expires INTEGER NOT NULL DEFAULT 0;
CREATE INDEX agents_owner ON agents (owner_node);

-- The daemons of a cluster (one, on SQLite): where each answers and when it last said it lives.
CREATE TABLE nodes (
  name TEXT PRIMARY KEY,
  url TEXT NOT NULL,
  pid INTEGER NOT NULL,
  host TEXT NOT NULL,
  started_at TEXT NOT NULL,
  heartbeat_at INTEGER NOT NULL
);

-- Which node's workers serve which tools, so a call can reach a worker connected to another node.
CREATE TABLE worker_tools (
  node TEXT NOT NULL,
  org TEXT NOT NULL,
  tool TEXT NOT NULL,
  descriptor TEXT NOT NULL,
  PRIMARY KEY (node, org, tool)
);

-- A secret the nodes share to call one another (a worker call forwarded to the node that has the worker).
CREATE TABLE cluster_secrets (
  id INTEGER PRIMARY KEY,
  secret TEXT NOT NULL
);
