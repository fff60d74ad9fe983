-- Events out and in, version 8. Never edit a shipped migration: add a new file.
--
-- deliveries is the webhook outbox: one row per (event, matching subscriber),
-- inserted in the transaction that writes the event, so a crash loses none.
-- The event itself is read from events when the delivery is sent. Times that
-- are compared (next_at, claimed_until, window_from) are epoch milliseconds.
-- A node sends a delivery only while its claim (claim, claimed_until) holds,
-- and a delivery waits while an earlier one of the same agent and subscriber
-- is pending, which keeps each subscriber's events of an agent in order: only
-- the head of such a queue (head = 1, its lowest pending event) is claimed,
-- so finding work costs a look at the heads, not at every waiting delivery.
CREATE TABLE deliveries (
  id TEXT PRIMARY KEY,
  org TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  event_seq INTEGER NOT NULL,
  event_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  subscriber TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_at INTEGER NOT NULL,
  window_from INTEGER NOT NULL,
  claimed_until INTEGER NOT NULL DEFAULT 0,
  claim TEXT,
  head INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  ended_at TEXT,
  last_error TEXT
);
CREATE INDEX deliveries_queue ON deliveries (agent_id, subscriber, status, event_seq);
CREATE INDEX deliveries_heads ON deliveries (status, head, next_at);
CREATE INDEX deliveries_org ON deliveries (org, id);

CREATE TABLE delivery_attempts (
  delivery_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  started_at TEXT NOT NULL,
  duration_ms INTEGER NOT NULL,
  http_status INTEGER,
  error TEXT,
  PRIMARY KEY (delivery_id, attempt)
);

-- A trigger's firings: one row per (agent, trigger, fire_key), where the key
-- is the schedule's time, the inbound webhook's ID or the source event's ID,
-- so a firing happens once however many daemons see it. A row is written
-- pending (with the message text it will queue) and becomes queued in the same
-- transaction as the message it queued.
CREATE TABLE trigger_firings (
  id TEXT PRIMARY KEY,
  org TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  trigger_key TEXT NOT NULL,
  fire_key TEXT NOT NULL,
  conversation TEXT NOT NULL,
  text TEXT NOT NULL,
  status TEXT NOT NULL,
  message_id TEXT,
  claimed_until INTEGER NOT NULL DEFAULT 0,
  claim TEXT,
  created_at TEXT NOT NULL,
  queued_at TEXT,
  error TEXT,
  UNIQUE (agent_id, trigger_key, fire_key)
);
CREATE INDEX trigger_firings_pending ON trigger_firings (status, claimed_until);
CREATE INDEX trigger_firings_last ON trigger_firings (agent_id, trigger_key, created_at);
