-- Version 15. Never edit a shipped migration: add a new file.
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
-- deliveries.run_end: on a claimed queue head, the last event_seq of the run
-- its sender took with it (the deliveries it may send before it records
-- anything). A sender that dies leaves its claim; whoever takes the head over
-- knows the deliveries up to run_end may have reached the subscriber.
-- possible_repeats: sends of the delivery made after such a take-over, so the
-- subscriber may have it twice (with the same webhook-id, which a Standard
-- Webhooks receiver drops).
ALTER TABLE slack_messages ADD COLUMN sent INTEGER NOT NULL DEFAULT 0;
ALTER TABLE slack_messages ADD COLUMN possible_duplicates INTEGER NOT NULL DEFAULT 0;
ALTER TABLE deliveries ADD COLUMN run_end INTEGER;
ALTER TABLE deliveries ADD COLUMN possible_repeats INTEGER NOT NULL DEFAULT 0;
