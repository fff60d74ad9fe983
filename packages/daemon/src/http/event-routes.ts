import { streamSSE } from "hono/streaming";
import { EventPage, EventStreamHeaders, EventStreamQuery, EventsQuery } from "@wardrik/protocol";
import { ownLookMs } from "../events/own-look.js";
import { agentOfOrg } from "./agent-lookup.js";
import { AgentStreamFilter } from "./agent-stream-filter.js";
import { AgentStreamFollower, isFrame } from "./agent-stream-follower.js";
import { toCloudEvent } from "./agent-summary.js";
import type { RouteTable } from "./route-table.js";
import { agentEventFrame, deltaFrame, joinFrames } from "./sse-frames.js";
import type { ApiServices } from "./services.js";
import { typeList } from "./type-list.js";

const STREAM_FRAMES =
  "Frames: `event: event` with `id: <seq>` and a CloudEvent (components.schemas.CloudEvent) as data; " +
  "`event: delta` with {run, text, reset?} as data (live text of a model reply, not stored); " +
  "comment lines as keep-alives. Reconnect with Last-Event-ID to resume after the last event seen.";

/** Live events wait at most this many turns of the event loop for what the work under way commits next. */
const SETTLE_LOOP_TURNS = 4;

/** A stream with nothing to send writes a comment this often, so proxies and clients know it is alive. */
const KEEP_ALIVE_MS = 15_000;

/** The agent's record: read back a page at a time, or followed live as server-sent events. */
export function registerEventRoutes(routes: RouteTable, svc: ApiServices): void {
  routes.add({
    method: "get",
    path: "/v1/agents/{id}/events",
    operationId: "listEvents",
    tags: ["events"],
    summary: "The agent's events (CloudEvents JSON) after a sequence number; filters: type=, run= (one turn), q= (text in the data)",
    query: EventsQuery,
    response: EventPage,
    handler: async (c, { params, query }) => {
      const agent = await agentOfOrg(svc, c.get("org"), params.id);
      const filter = { types: typeList(query.type), run: query.run, text: query.q };
      const events = await svc.store.events.list(agent.id, query.after, query.limit, filter);
      return c.json({ events: events.map(toCloudEvent), last_seq: await svc.store.events.lastSeq(agent.id) });
    },
  });

  routes.add({
    method: "get",
    path: "/v1/agents/{id}/events/stream",
    operationId: "streamEvents",
    tags: ["events"],
    summary:
      "Follow the agent's events live as server-sent events; resumes after Last-Event-ID (or ?after=); " +
      "filters: type=, run= (one turn), conversation= (one conversation's messages and turns, with their live text)",
    query: EventStreamQuery,
    headers: EventStreamHeaders,
    stream: STREAM_FRAMES,
    handler: async (c, { params, query, headers }) => {
      const agent = await agentOfOrg(svc, c.get("org"), params.id);
      // HEAD: the headers a GET would get, without starting a stream nobody reads.
      if (c.req.method === "HEAD") return c.body(null, 200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const header = headers["Last-Event-ID"];
      const after = header !== undefined && /^\d+$/.test(header) ? Number(header) : query.after;
      return streamSSE(c, async (stream) => {
        const types = typeList(query.type);
        const filter = new AgentStreamFilter({ types, run: query.run, conversation: query.conversation });
        const follower = new AgentStreamFollower(
          after,
          (e) => filter.shows(e),
          {
            read: async (from, limit) => {
              const page = await svc.store.events.list(agent.id, from, limit, { types, run: query.run, conversation: query.conversation });
              // The store picked the conversation's turns: every turn of the page is one of them.
              filter.knowRuns(page.flatMap((e) => (e.run !== undefined ? [e.run] : [])));
              return page;
            },
            send: (items) => stream.write(joinFrames(items.map((item) => (isFrame(item) ? item.frame : agentEventFrame(item))))),
            // The turns that committed these events go on at the next turns of the event loop (the fair share's pieces).
            settle: () => svc.runtime.opts.fairShare.settled(SETTLE_LOOP_TURNS),
            keepAlive: () => stream.write(": keep-alive\n\n"),
            open: () => !stream.aborted && !stream.closed,
          },
          // On PostgreSQL the stream also reads on its own now and then: another node's word of its events can be
          // lost (it died between its commit and its notice), and then nothing else would tell this one.
          { lookMs: ownLookMs(svc.store.db), keepAliveMs: KEEP_ALIVE_MS, pageSize: 1000 },
        );
        // Listen first, then catch up (in run()), so nothing falls between the two.
        const offs = [
          svc.bus.subscribe(agent.id, (e) => {
            // Before any live text of the turn: a turn of the stream's conversation is known from its start.
            filter.learn(e);
            follower.published(e);
          }),
          svc.onDelta(agent.id, (run, text, reset, retry) => {
            if (!filter.showsText(run)) return;
            follower.sendAlong(deltaFrame(reset ? { run, text, reset: true, ...(retry ? { retry } : {}) } : { run, text }));
          }),
          // Another node of a cluster wrote events of this agent (of a type the stream shows; other nodes are told which).
          svc.bus.onPoke(agent.id, () => follower.poked(), types),
        ];
        stream.onAbort(() => follower.stop());
        try {
          // A turn that started before `after` and is still open has events to come: the stream shows them.
          if (query.conversation !== undefined) filter.knowRuns(await svc.store.events.openRunsOf(agent.id, query.conversation));
          // A narrow stream may have nothing to send for a long time: the headers go out now, so the client knows it follows.
          if (filter.narrow) await stream.write(": following\n\n");
          await follower.run();
        } finally {
          for (const off of offs) off();
        }
      });
    },
  });
}
