import type { Store } from "../store/store.js";
import type { ForwardedCall, ForwardedRecall } from "./remote-worker-calls.js";

/**
 * Why a node must not run a call another node forwarded, or undefined when
 * it may: the call must be on the record as the owner wrote it, of that
 * agent of that org, for that tool with those arguments, running now (its
 * attempt), under the decision the request carries. A signed request is
 * thus no more than the owner's word that it runs a call it decided and
 * recorded, with its events, as every call is.
 */
export async function unrecordedCall(store: Store, call: ForwardedCall): Promise<string | undefined> {
  const row = await store.calls.get(call.ctx.callId);
  const agent = row ? await store.agents.get(row.agent_id) : undefined;
  const refused = `No call workers/${call.tool} ${call.ctx.callId} of agent ${call.ctx.agent} is running on the record`;
  if (!row || !agent || agent.org !== call.org || row.agent_id !== call.ctx.agent || row.run !== call.ctx.run) return `${refused}.`;
  if (row.tool !== `workers/${call.tool}`) return `${refused}: the record names ${row.tool}.`;
  if (row.status !== "running") return `${refused}: it is ${row.status}.`;
  if (row.idempotency_key !== call.ctx.idempotencyKey) return `${refused}: its idempotency key differs.`;
  if (row.attempts !== call.ctx.attempt) return `${refused}: its attempt is ${row.attempts}, not ${call.ctx.attempt}.`;
  if ((row.decision ?? "allow") !== call.decision || row.decision === "deny")
    return `${refused}: it was decided ${row.decision ?? "allow"}, not ${call.decision}.`;
  if (!sameJson(row.args, call.args)) return `${refused}: its arguments differ from the recorded ones.`;
  return undefined;
}

/**
 * Why a node must not ask its workers about a call another node asks about,
 * or undefined when it may: the call must be on the record, of an agent of
 * that org, with that idempotency key. A signed question thus reaches only
 * what the record already holds; it cannot probe workers for other keys.
 */
export async function unrecordedRecall(store: Store, recall: ForwardedRecall): Promise<string | undefined> {
  const { callId, idempotencyKey } = recall.question;
  const row = await store.calls.get(callId);
  const agent = row ? await store.agents.get(row.agent_id) : undefined;
  if (!row || !agent || agent.org !== recall.org || row.idempotency_key !== idempotencyKey)
    return `No call ${callId} of org ${recall.org} with that idempotency key is on the record.`;
  return undefined;
}

function sameJson(stored: string, given: unknown): boolean {
  try {
    return JSON.stringify(JSON.parse(stored)) === JSON.stringify(given ?? {});
  } catch {
    return false;
  }
}
