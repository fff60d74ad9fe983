-- Wardrik schema, version 1, for PostgreSQL: the same tables as sqlite/001_init.sql.
-- Never edit a shipped migration: add a new file.
-- Money stays floating point here as in SQLite (DOUBLE PRECISION, not REAL,
-- which is single precision in PostgreSQL); a later migration makes it exact.
-- SQLite's INTEGER is 64-bit: sequence numbers are BIGINT here, small counters
-- and 0/1 flags INTEGER.
CREATE TABLE tokens (
  id TEXT PRIMARY KEY,
  org TEXT NOT NULL,
  name TEXT NOT NULL,
  hash TEXT NOT NULL UNIQUE,
  admin INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL
);

CREATE TABLE agents (
  id TEXT PRIMARY KEY,
  org TEXT NOT NULL,
  name TEXT NOT NULL,
  source TEXT NOT NULL,
  definition TEXT,
  format INTEGER NOT NULL DEFAULT 1,
  file TEXT,
  status TEXT NOT NULL,
  reason TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (org, name)
);

CREATE TABLE conversations (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  key TEXT NOT NULL,
  summary TEXT,
  summary_upto BIGINT NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  UNIQUE (agent_id, key)
);

CREATE TABLE messages (
  conversation_id TEXT NOT NULL,
  seq BIGINT NOT NULL,
  run TEXT,
  role TEXT NOT NULL,
  content TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (conversation_id, seq)
);

CREATE TABLE inputs (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  conversation_id TEXT NOT NULL,
  text TEXT NOT NULL,
  status TEXT NOT NULL,
  run TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX inputs_queued ON inputs (conversation_id, status);

CREATE TABLE turns (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  conversation_id TEXT NOT NULL,
  status TEXT NOT NULL,
  reason TEXT,
  reply TEXT,
  iterations INTEGER NOT NULL DEFAULT 0,
  rounds INTEGER NOT NULL DEFAULT 0,
  rounds_done INTEGER NOT NULL DEFAULT 0,
  spend_usd DOUBLE PRECISION NOT NULL DEFAULT 0,
  format INTEGER NOT NULL DEFAULT 1,
  started_at TEXT NOT NULL,
  ended_at TEXT
);
CREATE INDEX turns_open ON turns (agent_id, status);
CREATE INDEX turns_conversation ON turns (conversation_id, status);

CREATE TABLE calls (
  id TEXT PRIMARY KEY,
  run TEXT NOT NULL,
  round INTEGER NOT NULL,
  position INTEGER NOT NULL,
  agent_id TEXT NOT NULL,
  model_call_id TEXT NOT NULL,
  tool TEXT NOT NULL,
  args TEXT NOT NULL,
  status TEXT NOT NULL,
  read_only INTEGER NOT NULL DEFAULT 0,
  idempotent INTEGER NOT NULL DEFAULT 0,
  idempotency_key TEXT NOT NULL,
  decision TEXT,
  reason TEXT,
  rule TEXT,
  result TEXT,
  cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0,
  attempts INTEGER NOT NULL DEFAULT 0,
  started_at TEXT,
  ended_at TEXT
);
CREATE INDEX calls_run ON calls (run, round, position);
CREATE INDEX calls_waiting ON calls (agent_id, status);

CREATE TABLE files (
  agent_id TEXT NOT NULL,
  path TEXT NOT NULL,
  content TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (agent_id, path)
);

CREATE TABLE spend (
  agent_id TEXT NOT NULL,
  day TEXT NOT NULL,
  model_usd DOUBLE PRECISION NOT NULL DEFAULT 0,
  tools_usd DOUBLE PRECISION NOT NULL DEFAULT 0,
  PRIMARY KEY (agent_id, day)
);

-- Each agent's events are one ordered log, keyed by (agent, seq).
CREATE TABLE events (
  agent_id TEXT NOT NULL,
  seq BIGINT NOT NULL,
  id TEXT NOT NULL,
  org TEXT NOT NULL,
  type TEXT NOT NULL,
  time TEXT NOT NULL,
  subject TEXT,
  run TEXT,
  data TEXT NOT NULL,
  PRIMARY KEY (agent_id, seq)
);

CREATE TABLE secrets (
  org TEXT NOT NULL,
  name TEXT NOT NULL,
  ciphertext TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (org, name)
);

CREATE TABLE idempotency (
  scope TEXT NOT NULL,
  key TEXT NOT NULL,
  result TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (scope, key)
);
