-- The engine's schema, version 2. Never edit a shipped migration: add a new file.
--
-- Each agent row carries its sequence counters and open-turn counts: every
-- transaction that writes for an agent updates that one row (allocating event
-- and message sequence numbers in the database, not in a process), which is
-- also where a cluster checks the agent's lease.
ALTER TABLE agents ADD COLUMN event_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN message_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN running_turns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN parked_turns INTEGER NOT NULL DEFAULT 0;
UPDATE agents SET
  event_seq = COALESCE((SELECT MAX(e.seq) FROM events e WHERE e.agent_id = agents.id), 0),
  message_seq = COALESCE((SELECT MAX(m.seq) FROM messages m JOIN conversations c ON c.id = m.conversation_id WHERE c.agent_id = agents.id), 0),
  running_turns = (SELECT COUNT(*) FROM turns t WHERE t.agent_id = agents.id AND t.status = 'running'),
  parked_turns = (SELECT COUNT(*) FROM turns t WHERE t.agent_id = agents.id AND t.status = 'parked');
-- The stored status is now the base one (idle, asleep, unreadable); running and parked come from the counters.
UPDATE agents SET status = 'idle' WHERE status IN ('running', 'parked');

-- Money is exact: integer micro-dollars instead of floating-point dollars.
ALTER TABLE turns ADD COLUMN spend_micros INTEGER NOT NULL DEFAULT 0;
UPDATE turns SET spend_micros = CAST(ROUND(spend_usd * 1000000) AS INTEGER);
ALTER TABLE turns DROP COLUMN spend_usd;
ALTER TABLE turns ADD COLUMN reason_code TEXT;
-- A turn's spend is settled into the daily spend table when the turn ends; until then budgets add open turns'
-- unsettled spend. tool_micros is the part tools reported; settled_micros what is already in spend (turns
-- saved by version 1 added to spend as they went).
ALTER TABLE turns ADD COLUMN tool_micros INTEGER NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN settled_micros INTEGER NOT NULL DEFAULT 0;
UPDATE turns SET settled_micros = spend_micros;

ALTER TABLE calls ADD COLUMN cost_micros INTEGER NOT NULL DEFAULT 0;
UPDATE calls SET cost_micros = CAST(ROUND(cost_usd * 1000000) AS INTEGER);
ALTER TABLE calls DROP COLUMN cost_usd;
-- Why an unfinished call ended (a failure code), and whether it may run again after a crash without a person.
ALTER TABLE calls ADD COLUMN error_code TEXT;
ALTER TABLE calls ADD COLUMN retry_safe INTEGER NOT NULL DEFAULT 0;
-- Until now files/write and files/delete were not transactional, and MCP idempotent hints do not make a call safe to repeat.
UPDATE calls SET retry_safe = CASE WHEN read_only = 1 OR (idempotent = 1 AND tool LIKE 'workers/%') THEN 1 ELSE 0 END;

ALTER TABLE spend ADD COLUMN model_micros INTEGER NOT NULL DEFAULT 0;
ALTER TABLE spend ADD COLUMN tools_micros INTEGER NOT NULL DEFAULT 0;
UPDATE spend SET model_micros = CAST(ROUND(model_usd * 1000000) AS INTEGER), tools_micros = CAST(ROUND(tools_usd * 1000000) AS INTEGER);
ALTER TABLE spend DROP COLUMN model_usd;
ALTER TABLE spend DROP COLUMN tools_usd;

-- The org-wide feed reads events in commit order (SQLite's rowid) per org.
CREATE INDEX events_org ON events (org);
CREATE INDEX inputs_agent ON inputs (agent_id, status);
