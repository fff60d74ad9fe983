import type { StoredEvent } from "../events/event-bus.js";
import { cloudEventJson } from "../events/event-json.js";

/**
 * Server-sent event frames of stored events, encoded once: every follower of
 * an agent receives the same event object from the bus, so its frame (UTF-8
 * bytes) is built by the first follower and reused by the others.
 */
const frames = new WeakMap<StoredEvent, Uint8Array>();

/** `event: event`, the CloudEvent as data, the event's seq as id (the agent stream's frame). */
export function agentEventFrame(event: StoredEvent): Uint8Array {
  let frame = frames.get(event);
  if (!frame) {
    frame = Buffer.from(`event: event\ndata: ${cloudEventJson(event)}\nid: ${event.seq}\n\n`);
    frames.set(event, frame);
  }
  return frame;
}

/** The feed's frame: the CloudEvent with its `cursor`, which is also the frame's id (one page is one write). */
export function feedEventFrame(event: StoredEvent & { cursor: string }): Uint8Array {
  const { cursor, ...stored } = event;
  const json = `${cloudEventJson(stored).slice(0, -1)},"cursor":${JSON.stringify(cursor)}}`;
  return Buffer.from(`event: event\ndata: ${json}\nid: ${cursor}\n\n`);
}

/** A model reply's live text on the agent stream: `event: delta` with {run, text, reset?, retry?} as data (not stored, no id). */
export function deltaFrame(delta: object): Uint8Array {
  return Buffer.from(`event: delta\ndata: ${JSON.stringify(delta)}\n\n`);
}

/** One chunk for a batch of frames: one socket write for what one commit (or one backlog page) produced. */
export function joinFrames(batch: Uint8Array[]): Uint8Array {
  return batch.length === 1 ? batch[0]! : Buffer.concat(batch);
}
