-- Version 13. Never edit a shipped migration: add a new file.
--
-- Effects Wardrik itself makes outside (Slack posts, webhook deliveries) are
-- claimed with their intent stored before the request, so a node that dies
-- between the request and storing the answer leaves a trace.
--
-- slack_messages.sent: post requests made for the message whose answer was
-- not stored (a definite refusal by Slack takes its one back). While it is
-- above zero and `ts` is NULL, an earlier request may have posted the
-- message: before posting, the thread is read for a message carrying this
-- one's metadata. possible_duplicates: posts made again while the thread
-- could not be read, so a second copy may be in Slack.
--
-- deliveries.possible_repeats: sends of the delivery after a node that held
-- it died holding its claim, so the subscriber may have received it before
-- (with the same webhook-id, which a Standard Webhooks receiver drops).
ALTER TABLE slack_messages ADD COLUMN sent INTEGER NOT NULL DEFAULT 0;
ALTER TABLE slack_messages ADD COLUMN possible_duplicates INTEGER NOT NULL DEFAULT 0;
ALTER TABLE deliveries ADD COLUMN possible_repeats INTEGER NOT NULL DEFAULT 0;
