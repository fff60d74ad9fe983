-- Version 10: an outbox row that costs fewer index writes. Never edit a shipped migration: add a new file.
--
-- Every turn that has a subscriber writes delivery rows in its own commit, so
-- each index entry they add is paid by the turn. The indexes hold only the
-- rows their queries look for: the queue and head indexes only pending
-- deliveries, so a delivery that is not a head, or is delivered, leaves them
-- alone, and dead letters have an index of their own for `wardrik deliveries
-- --failed`. Every query that needs one names the same condition
-- (`status = 'pending'`, `head = 1`, `status = 'failed'`), which lets SQLite
-- and PostgreSQL use a partial index. Listing by org walks the primary key
-- backwards (IDs sort by time). SQLite also rebuilds the table WITHOUT ROWID;
-- a PostgreSQL table has no such choice to make.
DROP INDEX deliveries_queue;
DROP INDEX deliveries_heads;
DROP INDEX deliveries_org;
CREATE INDEX deliveries_queue ON deliveries (agent_id, subscriber, event_seq) WHERE status = 'pending';
CREATE INDEX deliveries_heads ON deliveries (next_at) WHERE status = 'pending' AND head = 1;
CREATE INDEX deliveries_failed ON deliveries (org, id) WHERE status = 'failed';
