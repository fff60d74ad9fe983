-- Version 9. Never edit a shipped migration: add a new file.
--
-- The W3C trace context (traceparent) of a turn, recorded in the commit that
-- starts it when traces are exported: a turn that parks and resumes later,
-- after a crash or on another node, continues the same trace. NULL when the
-- turn started with tracing off.
ALTER TABLE turns ADD COLUMN trace_context TEXT;
