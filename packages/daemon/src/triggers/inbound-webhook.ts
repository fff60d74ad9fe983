import { createHash } from "node:crypto";
import { WardrikError, type HookAccepted } from "@wardrik/protocol";
import type { Clock } from "../ids.js";
import type { InboundDeliveriesTable } from "../store/inbound-deliveries.js";
import type { FiringRow, TriggerFiringsTable } from "../store/trigger-firings.js";
import { checkGithub, checkStandard, signingKey } from "../webhooks/signatures.js";
import type { TriggerFirer } from "./trigger-firer.js";
import type { IndexedTrigger, TriggerIndex } from "./trigger-index.js";

export interface InboundRequest {
  org: string;
  name: string;
  header(name: string): string | undefined;
  /** The body exactly as sent: signatures are over these bytes. */
  body: string;
  /** The body as JSON (the template's data), parsed within the daemon's limits; called only once a signature holds. */
  json(): unknown;
}

export interface InboundDeps {
  index: () => TriggerIndex;
  firer: TriggerFirer;
  firings: TriggerFiringsTable;
  deliveries: InboundDeliveriesTable;
  clock: Clock;
  newId: () => string;
  /** The trigger's secret with `${secret:NAME}` / `${env:NAME}` resolved; undefined when it refers to nothing. */
  secretOf(t: IndexedTrigger): Promise<string | undefined>;
}

const REPLAY_WAIT_MS = 5000;
/** How long a GitHub-format delivery is remembered: a replay within it queues nothing new. */
export const GITHUB_DELIVERY_TTL_MS = 24 * 60 * 60 * 1000;

/** How a request is signed: GitHub's X-Hub-Signature-256 alone, else Standard Webhooks. */
type Format = "standard" | "github";

/**
 * `POST /v1/hooks/{org}/{name}`: every webhook trigger of that name whose
 * secret verifies the request queues its message. A request that verifies
 * with none gets 401 and queues nothing. Only what is signed decides what is
 * a repeat, so no unsigned header can turn one delivery into two messages:
 * the `webhook-id` of Standard Webhooks (forever), or for GitHub's format a
 * hash of the signature and body (for 24 hours). A repeat is answered with
 * the message queued the first time.
 */
export async function acceptInbound(deps: InboundDeps, req: InboundRequest): Promise<HookAccepted> {
  const triggers = deps.index().webhooks(req.org, req.name);
  if (triggers.length === 0)
    throw new WardrikError("not_found", `No webhook ${req.name} in org ${req.org}: no agent has a trigger "webhook: ${req.name}".`);
  const nowMs = deps.clock.now().getTime();
  const nowS = Math.floor(nowMs / 1000);
  const format: Format =
    req.header("x-hub-signature-256") !== undefined && req.header("webhook-signature") === undefined ? "github" : "standard";
  const verified: IndexedTrigger[] = [];
  let why = "";
  for (const t of triggers) {
    const secret = await deps.secretOf(t);
    if (secret === undefined) continue;
    const problem = verify(format, secret, req, nowS);
    if (problem === undefined) verified.push(t);
    else why ||= problem;
  }
  if (verified.length === 0) {
    throw new WardrikError(
      "unauthorized",
      `The webhook's signature is missing or wrong (${why || "no secret to check it with"}). Sign it with the webhook's secret: Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature) or GitHub's X-Hub-Signature-256.`,
    );
  }
  const data = req.json();
  const fireKey = await deliveryFireKey(deps, format, req, nowMs);
  const messages: HookAccepted["messages"] = [];
  let replayed = true;
  for (const t of verified) {
    const { result, existing } = await deps.firer.fireNew(t, fireKey, data);
    let message: string;
    if (result.queued) {
      message = result.message;
      replayed = false;
    } else if (result.reason === "taken" && existing) {
      message = await queuedMessage(deps, existing);
    } else {
      throw new WardrikError(
        "conflict",
        `The webhook could not queue a message for agent ${t.agentName}: ${result.error ?? "try again"}.`,
        {
          retryable: result.reason !== "failed",
        },
      );
    }
    messages.push({ agent: t.agentId, agent_name: t.agentName, message, conversation: t.conversation });
  }
  return { message: messages[0]!.message, messages, replayed };
}

function verify(format: Format, secret: string, req: InboundRequest, nowS: number): string | undefined {
  if (format === "github") return checkGithub(secret, req.header("x-hub-signature-256"), req.body);
  const standard = { id: req.header("webhook-id"), timestamp: req.header("webhook-timestamp"), signature: req.header("webhook-signature") };
  return checkStandard(signingKey(secret), standard, req.body, nowS);
}

/**
 * The key a verified delivery fires its triggers with. Standard Webhooks
 * signs `webhook-id`, which stays the same on every retry: it is the key.
 * GitHub signs only the body, so the delivery is the signature and body; its
 * first arrival's key is recorded and given to every replay for 24 hours.
 */
async function deliveryFireKey(deps: InboundDeps, format: Format, req: InboundRequest, nowMs: number): Promise<string> {
  if (format === "standard") return req.header("webhook-id")!;
  const signature = req.header("x-hub-signature-256")!.trim().toLowerCase();
  const hash = createHash("sha256").update(signature).update("\n").update(req.body).digest("hex");
  return deps.deliveries.fireKey(req.org, req.name, `sha256:${hash}`, `github:${deps.newId()}`, nowMs, GITHUB_DELIVERY_TTL_MS);
}

/** The message an earlier delivery of the same ID queued; waits a moment when that delivery is still being queued. */
async function queuedMessage(deps: InboundDeps, first: FiringRow): Promise<string> {
  const until = Date.now() + REPLAY_WAIT_MS;
  let row: FiringRow | undefined = first;
  while (row && row.status === "pending" && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 50));
    row = await deps.firings.find(first.agent_id, first.trigger_key, first.fire_key);
  }
  if (row?.status === "queued" && row.message_id) return row.message_id;
  if (row?.status === "failed")
    throw new WardrikError(
      "conflict",
      `This webhook delivery was accepted before but could not be queued: ${row.error ?? "unknown reason"}.`,
    );
  throw new WardrikError("conflict", "A delivery with this ID is still being queued; retry in a moment.", { retryable: true });
}
