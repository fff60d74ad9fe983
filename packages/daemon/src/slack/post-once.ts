/**
 * One Slack message posted once, though the node posting it may die between
 * Slack's answer and storing its ts. Slack's chat.postMessage takes no
 * idempotency key, but a message can carry metadata and a thread can be read
 * back with it: each post carries its mark (kind and ref), and the intent is
 * stored before the request (SlackTable.claim counts it). When an earlier
 * request's answer was never stored, the thread is read for a message with
 * the mark first, and a message found is taken as the post. When the thread
 * cannot be read (the app lacks the history scope), the message is posted
 * again and the possible duplicate counted on its record and in the metrics.
 */
import type { Logger } from "../log/logger.js";
import type { SlackMessageKind, SlackTable } from "../store/slack.js";
import { postRefused, type Blocks, type SlackApi } from "./slack-api.js";

export interface PostOnceDeps {
  api: SlackApi;
  table: SlackTable;
  log: Logger;
  now: () => Date;
  /** The node the claim is held under. */
  node: string;
  /** Told of each post made while an earlier copy could not be ruled out. */
  onPossibleDuplicate?: (() => void) | undefined;
}

export interface SlackPost {
  kind: SlackMessageKind;
  ref: string;
  channel: string;
  threadTs: string;
  /** The record's state once posted (streaming, open). */
  state: string;
}

/**
 * Posts `m` unless it is posted or another node is posting it (then
 * undefined). `found`: an earlier request had posted it, so Slack shows an
 * older text than `text`. Throws when the post failed; the claim is then
 * given up, and the next try (the sweep) may post.
 */
export async function postOnce(
  d: PostOnceDeps,
  m: SlackPost,
  text: string,
  blocks?: Blocks,
): Promise<{ ts: string; found: boolean } | undefined> {
  const claim = await d.table.claim(m, d.node, d.now());
  if (!claim) return undefined;
  const mark = { kind: m.kind, ref: m.ref };
  if (claim.earlier > 0) {
    let found: string | undefined;
    try {
      found = await d.api.findPosted(m.channel, m.threadTs, mark);
    } catch (err) {
      d.log("warn", "a Slack thread could not be read for a message whose post lost its answer; posting it again may show it twice", {
        kind: m.kind,
        ref: m.ref,
        err: String(err),
      });
      await d.table.possibleDuplicate(m.kind, m.ref);
      d.onPossibleDuplicate?.();
    }
    if (found !== undefined) {
      await d.table.posted(m.kind, m.ref, found, d.now());
      return { ts: found, found: true };
    }
  }
  let ts: string;
  try {
    ts = await d.api.post(m.channel, m.threadTs, text, mark, blocks);
  } catch (err) {
    await d.table.notPosted(m.kind, m.ref, !postRefused(err));
    throw err;
  }
  await d.table.posted(m.kind, m.ref, ts, d.now());
  return { ts, found: false };
}
