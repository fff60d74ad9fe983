import { ConversationKey, TurnList, TurnListQuery } from "@wardrik/protocol";
import { agentOfOrg, conversationOf } from "./agent-lookup.js";
import { summariseTurn } from "./describe.js";
import { makeCursor, readCursor } from "./page-cursor.js";
import type { RouteTable } from "./route-table.js";
import type { ApiServices } from "./services.js";

/** How much of a turn's first message its line in the list shows. */
const FIRST_MESSAGE_CHARS = 200;

/** A conversation's turns, newest first: what each was asked, how it ended, how long it took and what it cost. */
export function registerTurnRoutes(routes: RouteTable, svc: ApiServices): void {
  routes.add({
    method: "get",
    path: "/v1/agents/{id}/conversations/{key}/turns",
    operationId: "listTurns",
    tags: ["turns"],
    summary: "A conversation's turns, newest first, with status, times, model calls and spend, a page at a time",
    params: { key: ConversationKey },
    query: TurnListQuery,
    response: TurnList,
    handler: async (c, { params, query }) => {
      const agent = await agentOfOrg(svc, c.get("org"), params.id);
      const conv = await conversationOf(svc, agent, params.key);
      const rows = await svc.store.turns.list(conv.id, {
        before: query.cursor === undefined ? undefined : readCursor("t", query.cursor),
        limit: query.limit + 1,
      });
      const page = rows.slice(0, query.limit);
      const first = await svc.store.inputs.firstTexts(
        conv.id,
        page.map((t) => t.id),
        FIRST_MESSAGE_CHARS,
      );
      return c.json({
        turns: page.map((t) => summariseTurn(t, conv.key, first.get(t.id))),
        next: rows.length > query.limit ? makeCursor("t", page.at(-1)!.id) : null,
      });
    },
  });
}
