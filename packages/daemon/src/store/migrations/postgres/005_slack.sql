-- Slack (version 4, PostgreSQL). Never edit a shipped migration: add a new file.
-- See sqlite/005_slack.sql for what each table holds.
CREATE TABLE slack_requests (
  key TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  status TEXT NOT NULL,
  received_at TEXT NOT NULL
);
CREATE INDEX slack_requests_received ON slack_requests (received_at);

CREATE TABLE slack_messages (
  kind TEXT NOT NULL,
  ref TEXT NOT NULL,
  channel TEXT NOT NULL,
  thread_ts TEXT NOT NULL,
  ts TEXT,
  state TEXT NOT NULL,
  decided_by TEXT,
  claimed_by TEXT,
  claimed_until TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (kind, ref)
);
CREATE INDEX slack_messages_state ON slack_messages (kind, state);

-- The sweep looks for turns that ended lately without their reply shown in Slack.
CREATE INDEX turns_ended ON turns (ended_at);
