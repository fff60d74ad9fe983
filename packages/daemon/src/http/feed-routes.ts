import { streamSSE } from "hono/streaming";
import { FeedPage, FeedQuery, FeedStreamHeaders, FeedStreamQuery, typeMatches, WardrikError } from "@wardrik/protocol";
import { feedEnd, feedStart, isFeedCursor, readFeed, type FeedFilter } from "../store/event-feed.js";
import { toCloudEvent } from "./agent-summary.js";
import { FEED_FOLLOWER_TIMING, FeedFollower } from "./feed-follower.js";
import type { RouteTable } from "./route-table.js";
import { feedEventFrame, joinFrames } from "./sse-frames.js";
import type { ApiServices } from "./services.js";
import { typeList } from "./type-list.js";
import { ownLookMs } from "../events/own-look.js";

const STREAM_FRAMES =
  "Frames: `event: event` with `id: <cursor>` and a CloudEvent with its `cursor` as data; comment lines as keep-alives. " +
  "Reconnect with Last-Event-ID to resume after the last event seen.";

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
        const follower = new FeedFollower(
          cursor,
          {
            read: (after, limit) => readFeed(svc.store.db, org, after, limit, filter),
            send: (events) => stream.write(joinFrames(events.map(feedEventFrame))),
            keepAlive: () => stream.write(": keep-alive\n\n"),
            open: () => !stream.aborted && !stream.closed,
          },
          { ...FEED_FOLLOWER_TIMING, readOnPoll: ownLookMs(svc.store.db) !== undefined },
        );
        // Only what the filter can pass wakes the follower: an event it cannot show, held back, is read on the follower's own retry.
        // With an agent filter it listens for those agents only, here and for other nodes' word: the bus then never
        // calls it for the rest, and other nodes can leave the rest unsaid (cluster/event-relay.ts).
        const agents = filter.agents ?? ["*"];
        const offs = agents.flatMap((agent) => [
          svc.bus.subscribe(agent, (e) => {
            if (e.org === org && (!filter.types || filter.types.some((t) => typeMatches(t, e.type)))) follower.wake();
          }),
          // Another node of a cluster wrote events of this agent (of any, without an agent filter) and of a type the
          // filter passes (other nodes are told which): read the feed again.
          svc.bus.onPoke(agent, () => follower.wake(), filter.types),
        ]);
        stream.onAbort(() => follower.stop());
        try {
          // The headers go out now, not with the first event: a client knows at once that it follows.
          await stream.write(": following\n\n");
          await follower.run();
        } finally {
          for (const off of offs) off();
        }
      });
    },
  });
}

function filterOf(query: { type?: string | undefined; agent?: string | undefined }): FeedFilter {
  const types = typeList(query.type);
  return {
    ...(types ? { types } : {}),
    ...(query.agent ? { agents: query.agent.split(",").filter(Boolean) } : {}),
  };
}

function checkedCursor(svc: ApiServices, raw: string | undefined): string {
  if (raw === undefined || raw === "") return feedStart(svc.store.db);
  if (!isFeedCursor(svc.store.db, raw)) {
    throw new WardrikError("bad_request", `"${raw}" is not a feed cursor; use the \`cursor\` of an event or page read from this daemon.`);
  }
  return raw;
}
