import { randomBytes } from "node:crypto";
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import { z } from "zod";
import {
  AgentDetail,
  AgentSummary,
  CreateAgentBody,
  DenyBody,
  PostMessageBody,
  PostMessageResult,
  ScopeBody,
  TurnView,
  WardrikError,
  type WardrikCloudEvent,
} from "@wardrik/protocol";
import { validateAgentDefinition } from "../config/index.js";
import type { StoredEvent } from "../events/event-bus.js";
import { agentStatus, type AgentRow } from "../store/rows.js";
import { readJson, type ApiEnv, type RouteTable } from "./route-table.js";
import type { ApiServices } from "./services.js";

const ListQuery = z.object({ name: z.string().optional() });
const EventsQuery = z.object({
  after: z.coerce.number().int().nonnegative().default(0),
  limit: z.coerce.number().int().positive().max(10_000).default(1000),
  type: z.string().optional().describe("Comma-separated event types, short (turn.completed) or full"),
});
const HistoryQuery = z.object({
  after: z.coerce.number().int().nonnegative().default(0),
  limit: z.coerce.number().int().positive().max(10_000).default(1000),
});
const Ok = z.object({ ok: z.literal(true) }).passthrough();

export function registerApiRoutes(routes: RouteTable, svc: ApiServices): void {
  const agentOf = async (c: Context<ApiEnv>): Promise<AgentRow> => {
    const id = c.req.param("id") ?? "";
    const row = await svc.store.agents.get(id);
    // Another org's agent answers exactly like a missing one.
    if (!row || row.org !== c.get("org"))
      throw new WardrikError(
        "not_found",
        `No agent ${id}. Agent IDs look like agt_01JF8X5RQ2M3V9ZK0B7Y4T6WHN; list them with GET /v1/agents.`,
      );
    return row;
  };

  routes.add({
    method: "get",
    path: "/v1/agents",
    summary: "List the org's agents with their status; ?name= finds one by name",
    query: ListQuery,
    response: z.object({ agents: z.array(AgentSummary) }),
    handler: async (c) => {
      const q = ListQuery.parse(c.req.query());
      const rows = await svc.store.agents.list(c.get("org"));
      return c.json({ agents: rows.filter((r) => !q.name || r.name === q.name).map(summarise) });
    },
  });

  routes.add({
    method: "post",
    path: "/v1/agents",
    summary: "Create an agent from a JSON definition",
    body: CreateAgentBody,
    response: AgentSummary,
    status: 201,
    handler: async (c) => {
      const body = await readJson(c);
      const def = validateAgentDefinition(body, "request body");
      const row = await svc.runtime.createAgent(c.get("org"), def);
      return c.json(summarise(row), 201);
    },
  });

  routes.add({
    method: "get",
    path: "/v1/agents/:id",
    summary: "An agent's details: definition, status, conversations, waiting calls, spend",
    response: AgentDetail,
    handler: async (c) => c.json(await svc.describeAgent(await agentOf(c))),
  });

  routes.add({
    method: "delete",
    path: "/v1/agents/:id",
    summary: "Remove an agent created through the API",
    response: Ok,
    handler: async (c) => {
      await svc.runtime.removeAgent(await agentOf(c));
      return c.json({ ok: true });
    },
  });

  routes.add({
    method: "post",
    path: "/v1/agents/:id/messages",
    summary: "Queue a message for a conversation (default main); a turn picks it up",
    body: PostMessageBody,
    response: PostMessageResult,
    status: 202,
    handler: async (c) => {
      const agent = await agentOf(c);
      const body = PostMessageBody.parse(await readJson(c));
      if (agent.status === "unreadable")
        throw new WardrikError("unreadable", `Agent ${agent.name} is unreadable: ${agent.reason ?? "unknown reason"}`);
      return c.json(await svc.runtime.enqueue(agent, body.conversation ?? "main", body.text), 202);
    },
  });

  routes.add({
    method: "get",
    path: "/v1/agents/:id/conversations",
    summary: "The agent's conversations",
    response: z.object({ conversations: z.array(z.object({ id: z.string(), key: z.string(), created_at: z.string() })) }),
    handler: async (c) => {
      const agent = await agentOf(c);
      const convs = await svc.store.conversations.list(agent.id);
      return c.json({ conversations: convs.map((v) => ({ id: v.id, key: v.key, created_at: v.created_at })) });
    },
  });

  routes.add({
    method: "get",
    path: "/v1/agents/:id/conversations/:key/messages",
    summary: "A conversation's full history (the key is the conversation's name, such as main)",
    query: HistoryQuery,
    response: z.object({ messages: z.array(z.unknown()), summary: z.string().nullable() }),
    handler: async (c) => {
      const agent = await agentOf(c);
      const q = HistoryQuery.parse(c.req.query());
      const key = c.req.param("key") ?? "";
      const conv = await svc.store.conversations.find(agent.id, key);
      if (!conv) throw new WardrikError("not_found", `Agent ${agent.name} has no conversation ${key}.`);
      const rows = await svc.store.conversations.historyPage(conv.id, q.after, q.limit);
      return c.json({
        summary: conv.summary,
        messages: rows.map((r) => ({
          seq: r.seq,
          role: r.role,
          ...(r.run ? { run: r.run } : {}),
          content: JSON.parse(r.content) as unknown,
          created_at: r.created_at,
        })),
      });
    },
  });

  routes.add({
    method: "get",
    path: "/v1/agents/:id/turns/:run",
    summary: "A turn's status, reply and calls",
    response: TurnView,
    handler: async (c) => {
      const agent = await agentOf(c);
      const turn = await svc.store.turns.get(c.req.param("run") ?? "");
      if (!turn || turn.agent_id !== agent.id)
        throw new WardrikError("not_found", `Agent ${agent.name} has no turn ${c.req.param("run")}.`);
      return c.json(await svc.describeTurn(turn));
    },
  });

  routes.add({
    method: "post",
    path: "/v1/agents/:id/cancel",
    summary: "Stop the running turn(s) and drop queued messages; body {conversation} narrows it to one conversation",
    body: ScopeBody,
    response: z.object({ cancelled: z.array(z.string()), dropped: z.number() }),
    handler: async (c) => {
      const agent = await agentOf(c);
      const body = ScopeBody.parse(await readJson(c, {}));
      return c.json(await svc.runtime.cancel(agent, body.conversation));
    },
  });

  routes.add({
    method: "post",
    path: "/v1/agents/:id/clear",
    summary: "Empty the history of every conversation (or the one named); the event record stays",
    body: ScopeBody,
    response: z.object({ cleared: z.array(z.string()) }),
    handler: async (c) => {
      const agent = await agentOf(c);
      const body = ScopeBody.parse(await readJson(c, {}));
      return c.json(await svc.runtime.clear(agent, body.conversation));
    },
  });

  const callRoute = (verb: "kill" | "approve" | "deny", summary: string) =>
    routes.add({
      method: "post",
      path: `/v1/agents/:id/calls/:call/${verb}`,
      summary,
      ...(verb === "deny" ? { body: DenyBody } : {}),
      response: z.object({ call: z.string(), status: z.string(), tool: z.string() }),
      handler: async (c) => {
        const agent = await agentOf(c);
        const callId = c.req.param("call") ?? "";
        const call =
          verb === "kill"
            ? await svc.runtime.kill(agent, callId)
            : verb === "approve"
              ? await svc.runtime.approve(agent, callId)
              : await svc.runtime.deny(agent, callId, DenyBody.parse(await readJson(c, {})).reason);
        return c.json({ call: call.id, status: call.status, tool: call.tool });
      },
    });
  callRoute("kill", "Stop one tool call; the model is told and the turn goes on");
  callRoute("approve", "Approve a call that waits for a person; it runs");
  callRoute("deny", "Refuse a call that waits for a person; the model is told why");

  routes.add({
    method: "get",
    path: "/v1/agents/:id/events",
    summary: "The agent's events (CloudEvents JSON) after a sequence number",
    query: EventsQuery,
    response: z.object({ events: z.array(z.unknown()), last_seq: z.number() }),
    handler: async (c) => {
      const agent = await agentOf(c);
      const q = EventsQuery.parse(c.req.query());
      const events = await svc.store.events.list(agent.id, q.after, q.limit, { types: q.type?.split(",") });
      return c.json({ events: events.map(toCloudEvent), last_seq: await svc.store.events.lastSeq(agent.id) });
    },
  });

  routes.add({
    method: "get",
    path: "/v1/agents/:id/events/stream",
    summary: "Follow the agent's events live as server-sent events; resumes after Last-Event-ID (or ?after=)",
    query: EventsQuery.pick({ after: true }),
    handler: async (c) => {
      const agent = await agentOf(c);
      const header = c.req.header("last-event-id");
      let after =
        header !== undefined && /^\d+$/.test(header) ? Number(header) : EventsQuery.pick({ after: true }).parse(c.req.query()).after;
      return streamSSE(c, async (stream) => {
        // Subscribe first, then backfill, so nothing falls between the two.
        const live: StoredEvent[] = [];
        let wake: (() => void) | undefined;
        const unsubscribe = svc.bus.subscribe(agent.id, (e) => {
          live.push(e);
          wake?.();
        });
        const deltaOff = svc.onDelta(agent.id, (run, text, reset) => {
          void stream.writeSSE({ event: "delta", data: JSON.stringify(reset ? { run, text, reset: true } : { run, text }) });
        });
        stream.onAbort(() => {
          unsubscribe();
          deltaOff();
          wake?.();
        });
        try {
          for (;;) {
            const backlog = await svc.store.events.list(agent.id, after, 1000);
            for (const e of backlog) {
              await stream.writeSSE({ id: String(e.seq), event: "event", data: JSON.stringify(toCloudEvent(e)) });
              after = e.seq;
            }
            if (backlog.length < 1000) break;
          }
          while (!stream.aborted && !stream.closed) {
            if (live.length === 0) {
              await new Promise<void>((resolve) => {
                const timer = setTimeout(resolve, 15_000);
                timer.unref();
                wake = () => {
                  clearTimeout(timer);
                  resolve();
                };
              });
              wake = undefined;
              if (live.length === 0 && !stream.aborted) await stream.write(": keep-alive\n\n");
              continue;
            }
            for (const e of live.splice(0)) {
              if (e.seq <= after) continue;
              await stream.writeSSE({ id: String(e.seq), event: "event", data: JSON.stringify(toCloudEvent(e)) });
              after = e.seq;
            }
          }
        } finally {
          unsubscribe();
          deltaOff();
        }
      });
    },
  });

  const TokenBody = z.object({
    org: z.string().regex(/^[A-Za-z0-9_-]{1,55}$/, "org names are 1-55 letters, digits, _ or -"),
    name: z.string().min(1).max(100).optional(),
  });
  routes.add({
    method: "post",
    path: "/v1/tokens",
    summary: "Create a bearer token for an org (admin token only); the token is shown once",
    body: TokenBody,
    response: z.object({ org: z.string(), name: z.string(), token: z.string() }),
    status: 201,
    handler: async (c) => {
      if (!c.get("admin")) throw new WardrikError("unauthorized", "Only the admin token can create tokens.", { status: 403 });
      const body = TokenBody.parse(await readJson(c));
      const token = "wdk_" + randomBytes(24).toString("base64url");
      const name = body.name ?? `${body.org} token`;
      await svc.store.tokens.add(body.org, name, token, false, new Date().toISOString());
      return c.json({ org: body.org, name, token }, 201);
    },
  });

  const SecretBody = z.object({ value: z.string().min(1).max(65_536) });
  routes.add({
    method: "post",
    path: "/v1/secrets/:name",
    summary: "Store a secret for ${secret:NAME} references (encrypted at rest; takes effect at daemon restart)",
    body: SecretBody,
    response: z.object({ name: z.string(), stored: z.literal(true) }),
    handler: async (c) => {
      const name = c.req.param("name") ?? "";
      if (!/^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(name)) {
        throw new WardrikError(
          "bad_request",
          `Secret names are letters, digits and _ (not starting with a digit); got "${name.slice(0, 40)}".`,
        );
      }
      const body = SecretBody.parse(await readJson(c));
      await svc.secrets.set(c.get("org"), name, body.value);
      return c.json({ name, stored: true as const });
    },
  });

  routes.add({
    method: "get",
    path: "/v1/secrets",
    summary: "The names of the org's secrets (never their values)",
    response: z.object({ secrets: z.array(z.string()) }),
    handler: async (c) => c.json({ secrets: await svc.secrets.names(c.get("org")) }),
  });

  routes.add({
    method: "post",
    path: "/v1/reload",
    summary: "Reread agents/: add new files, update edited ones, remove deleted ones",
    response: z.object({
      added: z.array(z.string()),
      updated: z.array(z.string()),
      removed: z.array(z.string()),
      unreadable: z.array(z.string()),
    }),
    handler: async (c) => {
      if (c.get("org") !== svc.org) throw new WardrikError("not_found", "Reload is for the project's org only.");
      return c.json(await svc.reload());
    },
  });
}

export function summarise(r: AgentRow): AgentSummary {
  let title = r.name;
  let description = "";
  if (r.definition) {
    try {
      const d = JSON.parse(r.definition) as { title?: string; description?: string };
      title = d.title ?? r.name;
      description = d.description ?? "";
    } catch {
      // an unreadable definition shows as such through status/reason
    }
  }
  return {
    id: r.id,
    org: r.org,
    name: r.name,
    title,
    description,
    status: agentStatus(r),
    source: r.source,
    ...(r.reason ? { reason: r.reason } : {}),
  };
}

export function toCloudEvent(e: StoredEvent): WardrikCloudEvent {
  const { agent: _agent, org: _org, ...rest } = e;
  return rest;
}
