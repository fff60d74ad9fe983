import {
  AgentDetail,
  AgentPage,
  AgentSummary,
  AnswerBody,
  ApproveBody,
  CallActionResult,
  CancelResult,
  ClearResult,
  ConversationKey,
  ConversationList,
  CreateAgentBody,
  DenyBody,
  EmptyBody,
  HistoryPage,
  HistoryQuery,
  ListAgentsQuery,
  Ok,
  PostMessageBody,
  PostMessageResult,
  ScopeBody,
  TurnView,
  WardrikError,
} from "@wardrik/protocol";
import { validateAgentDefinition } from "../config/index.js";
import { agentOfOrg, conversationOf } from "./agent-lookup.js";
import type { StoredMessage } from "../store/message-format.js";
import { checkEditedArguments, withEditedArguments } from "./edited-arguments.js";
import { makeCursor, readCursor } from "./page-cursor.js";
import { summarise, waitingQuestions } from "./agent-summary.js";
import { queueMessage } from "./queue-message.js";
import type { RouteTable } from "./route-table.js";
import type { ApiServices } from "./services.js";

export { summarise } from "./agent-summary.js";

/** Agents, their conversations, turns and calls. */
export function registerApiRoutes(routes: RouteTable, svc: ApiServices): void {
  routes.add({
    method: "get",
    path: "/v1/agents",
    operationId: "listAgents",
    tags: ["agents"],
    summary: "The org's agents with their status, a page at a time, ordered by name; ?name= finds one by name",
    query: ListAgentsQuery,
    response: AgentPage,
    handler: async (c, { query }) => {
      const org = c.get("org");
      if (query.name !== undefined) {
        const row = await svc.store.agents.byName(org, query.name);
        const questions = await waitingQuestions(svc.store, row ? [row] : []);
        return c.json({ agents: row ? [summarise(row, svc.runtime.waitsForTurn(row.id), questions.get(row.id))] : [], next: null });
      }
      const rows = await svc.store.agents.list(org, {
        ...(query.cursor === undefined ? {} : { after: readCursor("a", query.cursor) }),
        limit: query.limit + 1,
      });
      const page = rows.slice(0, query.limit);
      const next = rows.length > query.limit ? makeCursor("a", page.at(-1)!.name) : null;
      const questions = await waitingQuestions(svc.store, page);
      return c.json({ agents: page.map((r) => summarise(r, svc.runtime.waitsForTurn(r.id), questions.get(r.id))), next });
    },
  });

  routes.add({
    method: "post",
    path: "/v1/agents",
    operationId: "createAgent",
    tags: ["agents"],
    summary: "Create an agent from a JSON definition",
    body: CreateAgentBody,
    response: AgentSummary,
    status: 201,
    errors: [409],
    handler: async (c, { body }) => {
      const def = validateAgentDefinition(body, "request body");
      const row = await svc.runtime.createAgent(c.get("org"), def);
      return c.json(summarise(row), 201);
    },
  });

  routes.add({
    method: "get",
    path: "/v1/agents/{id}",
    operationId: "getAgent",
    tags: ["agents"],
    summary: "An agent's details: definition, status, conversations, waiting calls, spend",
    response: AgentDetail,
    handler: async (c, { params }) => c.json(await svc.describeAgent(await agentOfOrg(svc, c.get("org"), params.id))),
  });

  routes.add({
    method: "delete",
    path: "/v1/agents/{id}",
    operationId: "deleteAgent",
    tags: ["agents"],
    summary: "Remove an agent created through the API",
    response: Ok,
    errors: [409],
    handler: async (c, { params }) => {
      await svc.runtime.removeAgent(await agentOfOrg(svc, c.get("org"), params.id));
      return c.json({ ok: true });
    },
  });

  routes.add({
    method: "post",
    path: "/v1/agents/{id}/messages",
    operationId: "postMessage",
    tags: ["conversations"],
    summary: "Queue a message for a conversation (default main); a turn picks it up",
    body: PostMessageBody,
    response: PostMessageResult,
    status: 202,
    errors: [409],
    handler: async (c, { params, body }) => {
      const agent = await agentOfOrg(svc, c.get("org"), params.id);
      const storeAnswerIn = c.get("storeAnswerIn");
      let answer: string | undefined;
      const queued = await queueMessage(svc, agent, body.conversation ?? "main", body.text, {
        ...(storeAnswerIn
          ? {
              inTransaction: (tx, result) => {
                answer = JSON.stringify(result);
                return storeAnswerIn(tx, { status: 202, body: answer, contentType: "application/json" });
              },
            }
          : {}),
      });
      // The same bytes that were stored for a retry to replay.
      return c.body(answer ?? JSON.stringify(queued), 202, { "content-type": "application/json" });
    },
  });

  routes.add({
    method: "get",
    path: "/v1/agents/{id}/conversations",
    operationId: "listConversations",
    tags: ["conversations"],
    summary: "The agent's conversations",
    response: ConversationList,
    handler: async (c, { params }) => {
      const agent = await agentOfOrg(svc, c.get("org"), params.id);
      const convs = await svc.store.conversations.list(agent.id);
      return c.json({ conversations: convs.map((v) => ({ id: v.id, key: v.key, created_at: v.created_at })) });
    },
  });

  routes.add({
    method: "get",
    path: "/v1/agents/{id}/conversations/{key}/messages",
    operationId: "getConversationMessages",
    tags: ["conversations"],
    summary: "A conversation's full history (the key is the conversation's name, such as main)",
    params: { key: ConversationKey },
    query: HistoryQuery,
    response: HistoryPage,
    handler: async (c, { params, query }) => {
      const agent = await agentOfOrg(svc, c.get("org"), params.id);
      const conv = await conversationOf(svc, agent, params.key);
      const rows = await svc.store.conversations.historyPage(conv.id, query.after, query.limit);
      const contents = await withEditedArguments(
        svc.store,
        rows.map((r) => JSON.parse(r.content) as StoredMessage),
      );
      return c.json({
        summary: conv.summary,
        messages: rows.map((r, i) => ({
          seq: r.seq,
          role: r.role,
          ...(r.run ? { run: r.run } : {}),
          content: contents[i] as unknown,
          created_at: r.created_at,
        })),
      });
    },
  });

  routes.add({
    method: "get",
    path: "/v1/agents/{id}/turns/{run}",
    operationId: "getTurn",
    tags: ["turns"],
    summary: "A turn's status, reply and calls",
    response: TurnView,
    handler: async (c, { params }) => {
      const agent = await agentOfOrg(svc, c.get("org"), params.id);
      const turn = await svc.store.turns.get(params.run);
      if (!turn || turn.agent_id !== agent.id) throw new WardrikError("not_found", `Agent ${agent.name} has no turn ${params.run}.`);
      return c.json(await svc.describeTurn(turn));
    },
  });

  routes.add({
    method: "post",
    path: "/v1/agents/{id}/cancel",
    operationId: "cancelAgent",
    tags: ["conversations"],
    summary: "Stop the running turn(s) and drop queued messages; {conversation} narrows it to one conversation",
    description:
      "Without a body (or with {}) every conversation of the agent is cancelled. An unknown key or an empty conversation is a 400.",
    body: ScopeBody,
    bodyOptional: true,
    response: CancelResult,
    handler: async (c, { params, body }) =>
      c.json(await svc.runtime.cancel(await agentOfOrg(svc, c.get("org"), params.id), body.conversation)),
  });

  routes.add({
    method: "post",
    path: "/v1/agents/{id}/clear",
    operationId: "clearConversations",
    tags: ["conversations"],
    summary: "Empty the history of every conversation (or the one named); the event record stays",
    description: "Without a body (or with {}) every conversation is emptied. An unknown key or an empty conversation is a 400.",
    body: ScopeBody,
    bodyOptional: true,
    response: ClearResult,
    handler: async (c, { params, body }) =>
      c.json(await svc.runtime.clear(await agentOfOrg(svc, c.get("org"), params.id), body.conversation)),
  });

  const callRoute = (verb: "kill" | "approve" | "deny", operationId: string, summary: string) =>
    routes.add({
      method: "post",
      path: `/v1/agents/{id}/calls/{call}/${verb}`,
      operationId,
      tags: ["turns"],
      summary,
      body: verb === "deny" ? DenyBody : verb === "approve" ? ApproveBody : EmptyBody,
      bodyOptional: true,
      response: CallActionResult,
      errors: [409],
      handler: async (c, { params, body }) => {
        const agent = await agentOfOrg(svc, c.get("org"), params.id);
        const edited = verb === "approve" ? (body as ApproveBody).arguments : undefined;
        if (edited !== undefined) await checkEditedArguments(svc, agent, params.call, edited);
        const call =
          verb === "kill"
            ? await svc.runtime.kill(agent, params.call)
            : verb === "approve"
              ? await svc.runtime.approve(agent, params.call, edited, c.get("actor"))
              : await svc.runtime.deny(agent, params.call, (body as { reason?: string }).reason, c.get("actor"));
        return c.json({ call: call.id, status: call.status, tool: call.tool });
      },
    });
  callRoute("kill", "killCall", "Stop one tool call; the model is told and the turn goes on");
  callRoute("approve", "approveCall", "Approve a call that waits for a person; it runs, with {arguments} edited by the person if given");
  callRoute("deny", "denyCall", "Refuse a call that waits for a person; the model is told why");
  routes.add({
    method: "post",
    path: "/v1/agents/{id}/calls/{call}/answer",
    operationId: "answerCall",
    tags: ["turns"],
    summary: "Answer the question of a person/ask call; the answer is the call's result and the turn goes on",
    description:
      "The call must wait for an answer (409 not_waiting otherwise, and for a call that waits for approval). With choices, an answer " +
      "that is not one of them is a 400 that lists them. The record (question.answered) names who answered.",
    body: AnswerBody,
    response: CallActionResult,
    errors: [409],
    handler: async (c, { params, body }) => {
      const agent = await agentOfOrg(svc, c.get("org"), params.id);
      const call = await svc.runtime.answer(agent, params.call, body.answer, c.get("actor"));
      return c.json({ call: call.id, status: call.status, tool: call.tool });
    },
  });
}
