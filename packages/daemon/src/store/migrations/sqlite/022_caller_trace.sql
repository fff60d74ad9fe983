-- Version 22 (SQLite). Never edit a shipped migration: add a new file.
-- The message an `agents/NAME` call sends its child keeps the trace context
-- (W3C traceparent) of that call's span: the child turn joins its caller's
-- trace under that span wherever and whenever it starts or ends (another
-- node, after a crash), not only in the process that ran the call.
ALTER TABLE inputs ADD COLUMN caller_trace TEXT;
