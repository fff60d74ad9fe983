-- Schema 4: indexes that cost fewer page writes a turn. Never edit a shipped migration: add a new file.
--
-- The queue and waiting-call indexes only ever serve lookups of queued inputs
-- and waiting calls, so they hold only those rows: an input that a turn takes
-- at once, and a call that runs at once (the common case), no longer write an
-- index page when saved and another when they move on. Every query that needs
-- them names the same condition (`status = 'queued'`, `status = 'waiting'`),
-- which is what lets SQLite and PostgreSQL use a partial index.
DROP INDEX inputs_queued;
CREATE INDEX inputs_queued ON inputs (conversation_id) WHERE status = 'queued';
DROP INDEX inputs_agent;
CREATE INDEX inputs_agent ON inputs (agent_id) WHERE status = 'queued';
DROP INDEX calls_waiting;
CREATE INDEX calls_waiting ON calls (agent_id, id) WHERE status = 'waiting';
