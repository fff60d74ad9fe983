-- Version 16 (SQLite). Never edit a shipped migration: add a new file.
-- `wardrik agent show` lists an agent's latest calls a person approved with
-- edited arguments. Few calls are edited, so the index holds only those and
-- costs the other calls nothing.
CREATE INDEX calls_edited ON calls (agent_id, id) WHERE original_args IS NOT NULL;
