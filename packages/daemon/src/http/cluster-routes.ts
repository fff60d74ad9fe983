import { z } from "zod";
import { WardrikError } from "@wardrik/protocol";
import type { ForwardedCall, ForwardedRecall } from "../cluster/remote-worker-calls.js";
import { CLUSTER_HEADER, SeenSignatures } from "../cluster/node-key.js";
import type { ClusterCallHost } from "../cluster/cluster-call-host.js";
import { CallStop, type StopReason } from "../tools/toolset.js";
import type { Context } from "hono";
import type { ApiEnv } from "./api-env.js";
import type { RouteTable } from "./route-table.js";
import { parseRequestJson } from "./untrusted-json.js";

const ForwardedCallBody = z.strictObject({
  org: z.string().min(1),
  tool: z.string().min(1),
  args: z.unknown(),
  decision: z.string().min(1),
  ctx: z.strictObject({
    agent: z.string(),
    run: z.string(),
    callId: z.string().min(1),
    idempotencyKey: z.string(),
    attempt: z.number().int().positive(),
    timeoutMs: z.number().nonnegative(),
  }),
});
const RecallBody = z.strictObject({
  org: z.string().min(1),
  question: z.strictObject({
    callId: z.string().min(1),
    idempotencyKey: z.string(),
    attempt: z.number().int().nonnegative(),
    runningMs: z.number().nonnegative(),
    lastInstance: z.string().optional(),
  }),
});
const AbortBody = z.strictObject({
  callId: z.string().min(1),
  attempt: z
    .number()
    .int()
    .positive()
    .optional()
    .describe("The attempt whose request stops; absent (a node of an earlier release): the one that came last"),
  reason: z.enum(["killed", "timeout", "cancelled", "shutdown"]),
});
const Answer = z.object({ outcome: z.unknown(), cost: z.number() });
const Headers = z.object({ [CLUSTER_HEADER]: z.string().optional().describe("t=MS,k=KEYID,v1=SIGNATURE: the sending node's signature") });

/**
 * Node-to-node routes of a cluster: a worker call for a worker connected
 * here, the word that such a call must stop, and the question whether the
 * workers here know a call whose answer was lost. No bearer token: the
 * sending node signs each request with the node key, checked on the exact
 * bytes before anything is read from them (see cluster/node-key.ts); a call
 * runs only when the record shows it running, and the workers are asked
 * only about a call on the record with that key (see cluster/recorded-call.ts).
 */
export function registerClusterRoutes(routes: RouteTable, host: ClusterCallHost): void {
  // Forwarded calls in flight here, by call and attempt: a node frozen past its lease that wakes and stops its own
  // request (attempt 1) must not stop the same call that the agent's new owner sent here since (attempt 2).
  const running = new Map<string, Map<number, AbortController>>();
  const seen = new SeenSignatures();
  /** The body, once the signature over its bytes holds and was not used before; then checked against `schema`. */
  const signed = async <T extends z.ZodType>(c: Context<ApiEnv>, path: string, schema: T): Promise<z.output<T>> => {
    const text = await c.req.text();
    const header = c.req.header(CLUSTER_HEADER);
    const problem = host.verify(header, "POST", path, text) ?? (seen.first(header!) ? undefined : "the request was sent before (a replay)");
    if (problem) throw new WardrikError("unauthorized", `Only another node of this cluster may call this: ${problem}.`);
    // Signed by a node, but still read within the limits: a node's bug must not take this one down.
    const parsed = schema.safeParse(parseRequestJson(c, text));
    if (!parsed.success)
      throw new WardrikError("bad_request", `The body is not a ${path} request: ${parsed.error.issues[0]?.message ?? "invalid"}`);
    return parsed.data;
  };

  routes.add({
    method: "post",
    path: "/v1/cluster/calls",
    operationId: "clusterCall",
    tags: ["cluster"],
    summary: "Runs a worker call that another node of the cluster sends here (nodes only, signed)",
    public: true,
    headers: Headers,
    rawBody: { contentType: "application/json", description: "The call and the owner's decision, exactly as the sending node signed it." },
    response: Answer,
    errors: [401, 403],
    handler: async (c) => {
      const body: ForwardedCall = await signed(c, "/v1/cluster/calls", ForwardedCallBody);
      const unrecorded = await host.unrecorded(body);
      if (unrecorded) throw new WardrikError("unauthorized", unrecorded, { status: 403 });
      const controller = new AbortController();
      const attempts = running.get(body.ctx.callId) ?? new Map<number, AbortController>();
      attempts.set(body.ctx.attempt, controller);
      running.set(body.ctx.callId, attempts);
      // The calling node is gone (or stopping): its successor takes the call over, so the worker keeps it.
      c.req.raw.signal.addEventListener("abort", () => controller.abort(new CallStop("shutdown")), { once: true });
      let cost = 0;
      try {
        const outcome = await host.callLocal(body.tool, body.args, {
          ...body.ctx,
          org: body.org,
          decision: body.decision,
          // Checked on arrival; a call that then waited here for a worker is checked again before it goes: meanwhile
          // its owner may have lost the agent to a node that ran it and stored its answer.
          mayStart: (waited) => (waited ? host.unrecorded(body).then((why) => why === undefined) : true),
          signal: controller.signal,
          cost: (usd) => {
            if (Number.isFinite(usd) && usd > 0) cost += usd;
          },
        });
        return c.json({ outcome, cost });
      } finally {
        // The same attempt sent again has its own entry now.
        if (attempts.get(body.ctx.attempt) === controller) attempts.delete(body.ctx.attempt);
        if (attempts.size === 0 && running.get(body.ctx.callId) === attempts) running.delete(body.ctx.callId);
      }
    },
  });

  routes.add({
    method: "post",
    path: "/v1/cluster/calls/recall",
    operationId: "clusterCallRecall",
    tags: ["cluster"],
    summary: "Asks the workers connected here whether they know a call whose answer was lost (nodes only, signed)",
    public: true,
    headers: Headers,
    rawBody: { contentType: "application/json", description: "The call asked about, exactly as the sending node signed it." },
    response: z.looseObject({ known: z.boolean() }),
    errors: [401, 403],
    handler: async (c) => {
      // Nothing about any worker or call is said before the signature holds, nor about a call not on the record.
      const body: ForwardedRecall = await signed(c, "/v1/cluster/calls/recall", RecallBody);
      const unrecorded = await host.unrecordedRecall(body);
      if (unrecorded) throw new WardrikError("unauthorized", unrecorded, { status: 403 });
      const question = { ...body.question, until: 0, signal: c.req.raw.signal };
      return c.json(await host.recallHere(body.org, question));
    },
  });

  routes.add({
    method: "post",
    path: "/v1/cluster/calls/abort",
    operationId: "clusterCallAbort",
    tags: ["cluster"],
    summary: "Stops a worker call another node sent here, saying why (nodes only, signed)",
    public: true,
    headers: Headers,
    rawBody: { contentType: "application/json", description: "The call and why it stops, exactly as the sending node signed it." },
    response: z.object({ stopped: z.boolean() }),
    errors: [401],
    handler: async (c) => {
      const body = await signed(c, "/v1/cluster/calls/abort", AbortBody);
      const attempts = running.get(body.callId);
      const controller = attempts?.get(body.attempt ?? Math.max(0, ...(attempts?.keys() ?? [])));
      controller?.abort(new CallStop(body.reason as StopReason));
      return c.json({ stopped: controller !== undefined });
    },
  });
}
