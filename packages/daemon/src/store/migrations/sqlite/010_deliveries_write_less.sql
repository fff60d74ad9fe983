-- Version 10: an outbox row that costs fewer page writes. Never edit a shipped migration: add a new file.
--
-- Every turn that has a subscriber writes delivery rows in its own commit, so
-- each page they dirty is paid by the turn. The table is keyed by its ID alone
-- (WITHOUT ROWID: one b-tree instead of the rows plus a key index; IDs are
-- ULIDs, so new rows go to the end), and its indexes hold only the rows their
-- queries look for: the queue and head indexes only pending deliveries, so a
-- delivery that is not a head, or is delivered, leaves them alone, and dead
-- letters have an index of their own for `wardrik deliveries --failed`. Every
-- query that needs one names the same condition (`status = 'pending'`,
-- `head = 1`, `status = 'failed'`), which lets SQLite and PostgreSQL use a
-- partial index. Listing by org walks the key backwards (IDs sort by time).
CREATE TABLE deliveries_keyed (
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
) WITHOUT ROWID;
INSERT INTO deliveries_keyed (id, org, agent_id, event_seq, event_id, event_type, subscriber, status, attempts, next_at,
  window_from, claimed_until, claim, head, created_at, ended_at, last_error)
SELECT id, org, agent_id, event_seq, event_id, event_type, subscriber, status, attempts, next_at,
  window_from, claimed_until, claim, head, created_at, ended_at, last_error FROM deliveries;
DROP TABLE deliveries;
ALTER TABLE deliveries_keyed RENAME TO deliveries;
CREATE INDEX deliveries_queue ON deliveries (agent_id, subscriber, event_seq) WHERE status = 'pending';
CREATE INDEX deliveries_heads ON deliveries (next_at) WHERE status = 'pending' AND head = 1;
CREATE INDEX deliveries_failed ON deliveries (org, id) WHERE status = 'failed';
