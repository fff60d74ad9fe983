import { timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { WardrikError } from "@wardrik/protocol";
import { CallStop, type StopReason, type ToolCallContext, type ToolOutcome } from "../tools/toolset.js";
import type { RouteTable } from "./route-table.js";

/** What a node runs for another: a worker call its own workers serve. */
export interface ClusterCallHost {
  secret: string;
  callLocal(tool: string, args: unknown, ctx: ToolCallContext): Promise<ToolOutcome>;
}

const ForwardedCallBody = z.strictObject({
  org: z.string().min(1),
  tool: z.string().min(1),
  args: z.unknown(),
  ctx: z.strictObject({
    agent: z.string(),
    run: z.string(),
    callId: z.string().min(1),
    idempotencyKey: z.string(),
    // A node of an earlier build sends none: its call is then attempt 1.
    attempt: z.number().int().positive().default(1),
    timeoutMs: z.number().nonnegative(),
  }),
});
const AbortBody = z.strictObject({ callId: z.string().min(1), reason: z.enum(["killed", "timeout", "cancelled", "shutdown"]) });
const Answer = z.object({ outcome: z.unknown(), cost: z.number() });

/**
 * Node-to-node routes of a cluster, proven by the secret the nodes share (not
 * a bearer token): a worker call for a worker connected here, and the word
 * that such a call must stop.
 */
export function registerClusterRoutes(routes: RouteTable, host: ClusterCallHost): void {
  const running = new Map<string, AbortController>();
  const check = (given: string | undefined) => {
    const a = Buffer.from(given ?? "");
    const b = Buffer.from(host.secret);
    if (a.length !== b.length || !timingSafeEqual(a, b))
      throw new WardrikError("unauthorized", "Only another node of this cluster may call this.");
  };

  routes.add({
    method: "post",
    path: "/v1/cluster/calls",
    operationId: "clusterCall",
    tags: ["cluster"],
    summary: "Runs a worker call that another node of the cluster sends here (nodes only)",
    public: true,
    headers: z.object({ "wardrik-cluster": z.string().optional() }),
    body: ForwardedCallBody,
    response: Answer,
    handler: async (c, { body, headers }) => {
      check(headers["wardrik-cluster"]);
      const controller = new AbortController();
      running.set(body.ctx.callId, controller);
      // The calling node is gone (or stopping): its successor takes the call over, so the worker keeps it.
      c.req.raw.signal.addEventListener("abort", () => controller.abort(new CallStop("shutdown")), { once: true });
      let cost = 0;
      try {
        const outcome = await host.callLocal(body.tool, body.args, {
          ...body.ctx,
          org: body.org,
          signal: controller.signal,
          cost: (usd) => {
            if (Number.isFinite(usd) && usd > 0) cost += usd;
          },
        });
        return c.json({ outcome, cost });
      } finally {
        running.delete(body.ctx.callId);
      }
    },
  });

  routes.add({
    method: "post",
    path: "/v1/cluster/calls/abort",
    operationId: "clusterCallAbort",
    tags: ["cluster"],
    summary: "Stops a worker call another node sent here, saying why (nodes only)",
    public: true,
    headers: z.object({ "wardrik-cluster": z.string().optional() }),
    body: AbortBody,
    response: z.object({ stopped: z.boolean() }),
    handler: (c, { body, headers }) => {
      check(headers["wardrik-cluster"]);
      const controller = running.get(body.callId);
      controller?.abort(new CallStop(body.reason as StopReason));
      return c.json({ stopped: controller !== undefined });
    },
  });
}
