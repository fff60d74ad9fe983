import { WardrikError } from "@wardrik/protocol";
import type { Store } from "../store/store.js";

/** How long a client is asked to wait before it sends a refused request again. */
export const LOST_LEASE_RETRY_AFTER_S = 1;

/**
 * The answer to a request for an agent whose lease this daemon lost: 503,
 * retry after a second, with the address of the daemon that holds the agent
 * now when the database knows it. On a cluster the retry succeeds here too
 * (this node then records the request and tells the owner); a daemon alone
 * on SQLite never takes the agent back, so the owner's address is where to go.
 */
export async function leaseLostAnswer(store: Store, agentId: string): Promise<WardrikError> {
  const row = await store.agents.get(agentId);
  const name = row?.name ?? agentId;
  const node = await store.leases.owner(agentId);
  const url = node === undefined ? undefined : (await store.nodes.list()).find((n) => n.name === node)?.url;
  const where = url ? `the daemon at ${url} (node ${node})` : "another daemon";
  return new WardrikError(
    "unavailable",
    `Agent ${name} is driven by ${where} now, not by this one: its lease moved there. ${url ? `Send the request to ${url}, or` : "Try"} again in a moment. (On SQLite this means two daemons use one database; stop one of them.)`,
    { retryable: true, retryAfter: LOST_LEASE_RETRY_AFTER_S },
  );
}
