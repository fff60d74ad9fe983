-- The engine's schema, version 2 (PostgreSQL). Never edit a shipped migration: add a new file.
-- See sqlite/002_engine.sql for why each change is made.
ALTER TABLE agents ADD COLUMN event_seq BIGINT NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN message_seq BIGINT NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN running_turns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN parked_turns INTEGER NOT NULL DEFAULT 0;
UPDATE agents SET
  event_seq = COALESCE((SELECT MAX(e.seq) FROM events e WHERE e.agent_id = agents.id), 0),
  message_seq = COALESCE((SELECT MAX(m.seq) FROM messages m JOIN conversations c ON c.id = m.conversation_id WHERE c.agent_id = agents.id), 0),
  running_turns = (SELECT COUNT(*) FROM turns t WHERE t.agent_id = agents.id AND t.status = 'running'),
  parked_turns = (SELECT COUNT(*) FROM turns t WHERE t.agent_id = agents.id AND t.status = 'parked');
UPDATE agents SET status = 'idle' WHERE status IN ('running', 'parked');

ALTER TABLE turns ADD COLUMN spend_micros BIGINT NOT NULL DEFAULT 0;
UPDATE turns SET spend_micros = ROUND(spend_usd * 1000000)::BIGINT;
ALTER TABLE turns DROP COLUMN spend_usd;
ALTER TABLE turns ADD COLUMN reason_code TEXT;
-- A turn's spend is settled into the daily spend table when the turn ends; until then budgets add open turns'
-- unsettled spend. tool_micros is the part tools reported; settled_micros what is already in spend (turns
-- saved by version 1 added to spend as they went).
ALTER TABLE turns ADD COLUMN tool_micros BIGINT NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN settled_micros BIGINT NOT NULL DEFAULT 0;
UPDATE turns SET settled_micros = spend_micros;

ALTER TABLE calls ADD COLUMN cost_micros BIGINT NOT NULL DEFAULT 0;
UPDATE calls SET cost_micros = ROUND(cost_usd * 1000000)::BIGINT;
ALTER TABLE calls DROP COLUMN cost_usd;
ALTER TABLE calls ADD COLUMN error_code TEXT;
ALTER TABLE calls ADD COLUMN retry_safe INTEGER NOT NULL DEFAULT 0;
UPDATE calls SET retry_safe = CASE WHEN read_only = 1 OR (idempotent = 1 AND tool LIKE 'workers/%') THEN 1 ELSE 0 END;

ALTER TABLE spend ADD COLUMN model_micros BIGINT NOT NULL DEFAULT 0;
ALTER TABLE spend ADD COLUMN tools_micros BIGINT NOT NULL DEFAULT 0;
UPDATE spend SET model_micros = ROUND(model_usd * 1000000)::BIGINT, tools_micros = ROUND(tools_usd * 1000000)::BIGINT;
ALTER TABLE spend DROP COLUMN model_usd;
ALTER TABLE spend DROP COLUMN tools_usd;

-- The org-wide feed: a global position, and the writing transaction's ID so a
-- reader only passes events whose transactions have all finished (commit
-- order can differ from the order positions were handed out).
ALTER TABLE events ADD COLUMN gseq BIGSERIAL;
ALTER TABLE events ADD COLUMN txid xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX events_org ON events (org, txid, gseq);
CREATE INDEX inputs_agent ON inputs (agent_id, status);
