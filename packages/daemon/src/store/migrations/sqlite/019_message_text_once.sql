-- Version 19 (SQLite). Never edit a shipped migration: add a new file.
-- A large message (over LARGE_TEXT_CHARS characters) is written once, in its
-- message.queued event: its inputs row keeps only the first characters (for
-- listings) and names the event (`text_seq`, in the agent's log), and its
-- history row names the same event instead of holding the text again. Three
-- copies of a megabyte message made one commit write three megabytes, and
-- that commit held every other request meanwhile.
ALTER TABLE inputs ADD COLUMN text_seq INTEGER;
