import { streamSSE } from "hono/streaming";
import { EventPage, EventStreamHeaders, EventStreamQuery, EventsQuery, typeMatches } from "@wardrik/protocol";
import type { StoredEvent } from "../events/event-bus.js";
import { ownLookMs } from "../events/own-look.js";
import { agentOfOrg } from "./agent-lookup.js";
import { toCloudEvent } from "./agent-summary.js";
import type { RouteTable } from "./route-table.js";
import { agentEventFrame, joinFrames } from "./sse-frames.js";
import type { ApiServices } from "./services.js";

const STREAM_FRAMES =
  "Frames: `event: event` with `id: <seq>` and a CloudEvent (components.schemas.CloudEvent) as data; " +
  "`event: delta` with {run, text, reset?} as data (live text of a model reply, not stored); " +
  "comment lines as keep-alives. Reconnect with Last-Event-ID to resume after the last event seen.";

/** A stream with nothing to send writes a comment this often, so proxies and clients know it is alive. */
const KEEP_ALIVE_MS = 15_000;

/** The agent's record: read back a page at a time, or followed live as server-sent events. */
export function registerEventRoutes(routes: RouteTable, svc: ApiServices): void {
  routes.add({
    method: "get",
    path: "/v1/agents/{id}/events",
    operationId: "listEvents",
    tags: ["events"],
    summary: "The agent's events (CloudEvents JSON) after a sequence number",
    query: EventsQuery,
    response: EventPage,
    handler: async (c, { params, query }) => {
      const agent = await agentOfOrg(svc, c.get("org"), params.id);
      const events = await svc.store.events.list(agent.id, query.after, query.limit, { types: query.type?.split(",") });
      return c.json({ events: events.map(toCloudEvent), last_seq: await svc.store.events.lastSeq(agent.id) });
    },
  });

  routes.add({
    method: "get",
    path: "/v1/agents/{id}/events/stream",
    operationId: "streamEvents",
    tags: ["events"],
    summary: "Follow the agent's events live as server-sent events; resumes after Last-Event-ID (or ?after=)",
    query: EventStreamQuery,
    headers: EventStreamHeaders,
    stream: STREAM_FRAMES,
    handler: async (c, { params, query, headers }) => {
      const agent = await agentOfOrg(svc, c.get("org"), params.id);
      // HEAD: the headers a GET would get, without starting a stream nobody reads.
      if (c.req.method === "HEAD") return c.body(null, 200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const header = headers["Last-Event-ID"];
      let after = header !== undefined && /^\d+$/.test(header) ? Number(header) : query.after;
      return streamSSE(c, async (stream) => {
        // Subscribe first, then backfill, so nothing falls between the two.
        const live: StoredEvent[] = [];
        let wake: (() => void) | undefined;
        const types = query.type?.split(",");
        const unsubscribe = svc.bus.subscribe(agent.id, (e) => {
          if (types && !types.some((t) => typeMatches(t, e.type))) return;
          live.push(e);
          wake?.();
        });
        const deltaOff = svc.onDelta(agent.id, (run, text, reset, retry) => {
          const frame = reset ? { run, text, reset: true, ...(retry ? { retry } : {}) } : { run, text };
          void stream.writeSSE({ event: "delta", data: JSON.stringify(frame) });
        });
        // Another node of a cluster wrote events of this agent: they are read from the store.
        let stale = false;
        const pokeOff = svc.bus.onPoke(
          agent.id,
          () => {
            stale = true;
            wake?.();
          },
          types,
        );
        stream.onAbort(() => {
          unsubscribe();
          deltaOff();
          pokeOff();
          wake?.();
        });
        const catchUp = async () => {
          for (;;) {
            const backlog = await svc.store.events.list(agent.id, after, 1000, { types });
            if (backlog.length > 0) {
              await stream.write(joinFrames(backlog.map(agentEventFrame)));
              after = backlog[backlog.length - 1]!.seq;
            }
            if (backlog.length < 1000) break;
          }
        };
        // On PostgreSQL the stream also reads on its own now and then: another node's notice can be lost (it died between
        // its commit and its notice), and then nothing else would tell this one.
        const lookMs = ownLookMs(svc.store.db) ?? KEEP_ALIVE_MS;
        let idleMs = 0;
        try {
          await catchUp();
          while (!stream.aborted && !stream.closed) {
            if (stale) {
              stale = false;
              await catchUp();
              continue;
            }
            if (live.length === 0) {
              const woken = await new Promise<boolean>((resolve) => {
                const timer = setTimeout(() => resolve(false), lookMs);
                timer.unref();
                wake = () => {
                  clearTimeout(timer);
                  resolve(true);
                };
              });
              wake = undefined;
              if (woken || stream.aborted) {
                idleMs = 0;
                continue;
              }
              idleMs += lookMs;
              if (lookMs < KEEP_ALIVE_MS) stale = true;
              if (idleMs >= KEEP_ALIVE_MS) {
                idleMs = 0;
                await stream.write(": keep-alive\n\n");
              }
              continue;
            }
            // Everything that arrived since the last write goes out in one write (one commit's events, usually).
            const batch: Uint8Array[] = [];
            for (const e of live.splice(0)) {
              if (e.seq <= after) continue;
              batch.push(agentEventFrame(e));
              after = e.seq;
            }
            if (batch.length > 0) await stream.write(joinFrames(batch));
          }
        } finally {
          unsubscribe();
          deltaOff();
          pokeOff();
        }
      });
    },
  });
}
