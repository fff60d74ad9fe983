-- Version 19 (PostgreSQL). Never edit a shipped migration: add a new file.
-- See sqlite/019_message_text_once.sql for why.
ALTER TABLE inputs ADD COLUMN text_seq BIGINT;
