import type { Db, Row } from "./db.js";
import type { AgentRow } from "./store.js";

/**
 * One page of an org's agents, ordered by name, after the name `after`
 * (keyset paging: stable while agents come and go). Kept apart from Store for
 * the HTTP layer's GET /v1/agents; it may move into Store as is.
 *
 * The comparison and the ORDER BY use the same collation on each database, so
 * pages neither skip nor repeat agents on SQLite or PostgreSQL.
 */
export function listAgentPage(db: Db, org: string, after: string | undefined, limit: number): Promise<AgentRow[]> {
  return after === undefined
    ? db.all<AgentRow & Row>("SELECT * FROM agents WHERE org = ? ORDER BY name LIMIT ?", [org, limit])
    : db.all<AgentRow & Row>("SELECT * FROM agents WHERE org = ? AND name > ? ORDER BY name LIMIT ?", [org, after, limit]);
}
