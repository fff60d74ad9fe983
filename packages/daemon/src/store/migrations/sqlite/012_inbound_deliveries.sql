-- Version 12 (SQLite). Never edit a shipped migration: add a new file.
-- Inbound webhook deliveries in GitHub's format, by a hash of their signature
-- and body (the only part of such a request that is signed): a replay within
-- expires_at (ms) gets the fire key of the first, so it queues nothing new,
-- whatever unsigned headers (X-GitHub-Delivery, Idempotency-Key) it carries.
-- Standard Webhooks deliveries need no row: their signed webhook-id is the
-- fire key itself. Expired rows are swept.
CREATE TABLE inbound_deliveries (
  org TEXT NOT NULL,
  hook TEXT NOT NULL,
  delivery TEXT NOT NULL,
  fire_key TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (org, hook, delivery)
);
CREATE INDEX inbound_deliveries_expiry ON inbound_deliveries (expires_at);
