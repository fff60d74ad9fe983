-- Version 12 (PostgreSQL). Never edit a shipped migration: add a new file.
-- See sqlite/012_inbound_deliveries.sql for why.
CREATE TABLE inbound_deliveries (
  org TEXT NOT NULL,
  hook TEXT NOT NULL,
  delivery TEXT NOT NULL,
  fire_key TEXT NOT NULL,
  expires_at BIGINT NOT NULL,
  PRIMARY KEY (org, hook, delivery)
);
CREATE INDEX inbound_deliveries_expiry ON inbound_deliveries (expires_at);
