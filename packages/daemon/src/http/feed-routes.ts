import { streamSSE } from "hono/streaming";
import { FeedPage, FeedQuery, FeedStreamHeaders, FeedStreamQuery, WardrikError } from "@wardrik/protocol";
import { feedEnd, isFeedCursor, readFeed, type FeedFilter } from "../store/event-feed.js";
import { toCloudEvent } from "./agent-summary.js";
import type { RouteTable } from "./route-table.js";
import { feedEventFrame, joinFrames } from "./sse-frames.js";
import type { ApiServices } from "./services.js";

const STREAM_FRAMES =
  "Frames: `event: event` with `id: <cursor>` and a CloudEvent with its `cursor` as data; comment lines as keep-alives. " +
  "Reconnect with Last-Event-ID to resume after the last event seen.";
/** Followers re-read at least this often: on PostgreSQL an event can wait for older transactions to finish. */
const POLL_MS = 1000;
const PAGE = 500;

/**
 * The org-wide feed: every agent's events in one stream, read a page at a
 * time or followed live. It is what the web console, webhooks and other
 * followers build on; filters (type patterns, agents) apply in SQL.
 */
export function registerFeedRoutes(routes: RouteTable, svc: ApiServices): void {
  routes.add({
    method: "get",
    path: "/v1/events",
    operationId: "listFeed",
    tags: ["events"],
    summary: "Every agent's events of the org (CloudEvents JSON) after a cursor",
    query: FeedQuery,
    response: FeedPage,
    handler: async (c, { query }) => {
      const after = checkedCursor(svc, query.after);
      const page = await readFeed(svc.store.db, c.get("org"), after, query.limit, filterOf(query));
      return c.json({ events: page.events.map((e) => ({ ...toCloudEvent(e), cursor: e.cursor })), cursor: page.cursor });
    },
  });

  routes.add({
    method: "get",
    path: "/v1/events/stream",
    operationId: "streamFeed",
    tags: ["events"],
    summary: "Follow every agent's events of the org live as server-sent events; resumes after Last-Event-ID (or ?after=)",
    query: FeedStreamQuery,
    headers: FeedStreamHeaders,
    stream: STREAM_FRAMES,
    handler: async (c, { query, headers }) => {
      if (c.req.method === "HEAD") return c.body(null, 200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const org = c.get("org");
      const filter = filterOf(query);
      let cursor = checkedCursor(svc, headers["Last-Event-ID"] ?? query.after);
      if (query.live === "only" && headers["Last-Event-ID"] === undefined) cursor = await feedEnd(svc.store.db, org);
      return streamSSE(c, async (stream) => {
        let pending = true;
        let wake: (() => void) | undefined;
        const unsubscribe = svc.bus.subscribe("*", (e) => {
          if (e.org !== org) return;
          pending = true;
          wake?.();
        });
        // Another node of a cluster wrote events: read the feed again.
        const pokeOff = svc.bus.onPoke("*", () => {
          pending = true;
          wake?.();
        });
        stream.onAbort(() => {
          unsubscribe();
          pokeOff();
          wake?.();
        });
        let idleMs = 0;
        try {
          // The headers go out now, not with the first event: a client knows at once that it follows.
          await stream.write(": following\n\n");
          while (!stream.aborted && !stream.closed) {
            if (pending) {
              pending = false;
              for (;;) {
                const page = await readFeed(svc.store.db, org, cursor, PAGE, filter);
                if (page.events.length > 0) await stream.write(joinFrames(page.events.map(feedEventFrame)));
                cursor = page.cursor;
                if (page.events.length < PAGE) break;
              }
            }
            await new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, POLL_MS);
              timer.unref();
              wake = () => {
                clearTimeout(timer);
                resolve();
              };
            });
            wake = undefined;
            // Without a wake-up, look again anyway now and then (an event held back by an older transaction).
            if (!pending) {
              idleMs += POLL_MS;
              pending = svc.store.db.dialect === "postgres";
              if (idleMs >= 15_000 && !stream.aborted) {
                idleMs = 0;
                await stream.write(": keep-alive\n\n");
              }
            } else idleMs = 0;
          }
        } finally {
          unsubscribe();
          pokeOff();
        }
      });
    },
  });
}

function filterOf(query: { type?: string | undefined; agent?: string | undefined }): FeedFilter {
  return {
    ...(query.type ? { types: query.type.split(",") } : {}),
    ...(query.agent ? { agents: query.agent.split(",").filter(Boolean) } : {}),
  };
}

function checkedCursor(svc: ApiServices, raw: string | undefined): string {
  if (raw === undefined || raw === "") return svc.store.db.dialect === "postgres" ? "0.0" : "0";
  if (!isFeedCursor(svc.store.db, raw)) {
    throw new WardrikError("bad_request", `"${raw}" is not a feed cursor; use the \`cursor\` of an event or page read from this daemon.`);
  }
  return raw;
}
