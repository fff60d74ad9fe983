-- Version 18 (SQLite). Never edit a shipped migration: add a new file.
-- A message an agent sends another through an `agents/NAME` call names that
-- call: the turn that takes the message is the call's child turn (its
-- turn.started names the parent call), and a call started again after a
-- restart finds its child here instead of sending the message twice. The
-- second index finds the call a turn runs for (only child turns have one).
ALTER TABLE inputs ADD COLUMN parent_call TEXT;
CREATE INDEX inputs_parent_call ON inputs (parent_call) WHERE parent_call IS NOT NULL;
CREATE INDEX inputs_child_run ON inputs (run) WHERE parent_call IS NOT NULL;
