-- Slack (version 4). Never edit a shipped migration: add a new file.
--
-- Requests from Slack already taken: Slack sends an event again when it did
-- not hear back in time, and one message can arrive twice (as app_mention
-- and as message). `key` is `event:EVENT_ID` or `message:CHANNEL:TS`; `owner`
-- is the daemon process that took it, so a request taken by a process that
-- stopped before queueing it is taken again when Slack retries.
CREATE TABLE slack_requests (
  key TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  status TEXT NOT NULL,
  received_at TEXT NOT NULL
);
CREATE INDEX slack_requests_received ON slack_requests (received_at);

-- Messages Wardrik posted in Slack threads: a turn's reply (`kind` reply,
-- `ref` the turn's run) or a call waiting for approval (`kind` approval,
-- `ref` the call). `ts` is Slack's ID of the message, NULL until posted;
-- `state` is streaming/final for replies and open/decided for approvals.
-- `decided_by` is the Slack user who clicked Approve or Deny. Posting or
-- updating a message is claimed first by one node of a cluster
-- (`claimed_by`, until `claimed_until`): a node that dies holding a claim
-- loses it when the time passes, and another node does the work.
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
