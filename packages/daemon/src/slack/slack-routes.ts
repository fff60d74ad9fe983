/**
 * Slack's two endpoints. Slack signs its requests instead of sending a
 * bearer token, so these routes are public and check the signature over the
 * raw body before reading anything.
 */
import type { Context } from "hono";
import { z } from "zod";
import { WardrikError } from "@wardrik/protocol";
import { errorResponse } from "../http/http-errors.js";
import { parseRequestJson } from "../http/untrusted-json.js";
import type { ApiEnv, RouteTable } from "../http/route-table.js";
import type { ApiServices } from "../http/services.js";
import { EventInput, InteractionPayload } from "./slack-payloads.js";
import type { SlackService } from "./slack-service.js";

const SignedHeaders = z.object({
  "x-slack-request-timestamp": z.string().optional().describe("Unix seconds when Slack sent the request."),
  "x-slack-signature": z.string().optional().describe("v0= and the HMAC-SHA256 of v0:TIMESTAMP:BODY under the signing secret."),
  "x-slack-retry-num": z.string().optional().describe("Set on Slack's retries; a retried event is not queued twice."),
});

export function registerSlackRoutes(routes: RouteTable, svc: ApiServices): void {
  routes.add({
    method: "post",
    path: "/v1/slack/events",
    operationId: "receiveSlackEvent",
    tags: ["slack"],
    summary: "Slack's Events API: messages in mapped channels and mentions of the app",
    description:
      "Signed by Slack (no bearer token). Answers url_verification with its challenge; queues a message for the channel's agent in the conversation slack:CHANNEL:THREAD_TS.",
    public: true,
    headers: SignedHeaders,
    rawBody: { contentType: "application/json", description: "An Events API request, exactly as Slack signed it." },
    errors: [401, 404],
    handler: async (c) => {
      const read = await signed(c, svc.slack);
      if (read instanceof Response) return read;
      const parsed = EventInput.safeParse(parseRequestJson(c, read.text));
      if (!parsed.success) throw new WardrikError("bad_request", "The body is not an Events API request (it needs a type).");
      return c.json(await read.slack.inbound.event(parsed.data));
    },
  });

  routes.add({
    method: "post",
    path: "/v1/slack/interactions",
    operationId: "receiveSlackInteraction",
    tags: ["slack"],
    summary: "Slack's interactivity requests: Approve and Deny clicks",
    description: "Signed by Slack (no bearer token). Only users in slack.approvers decide calls; anyone else is told so, privately.",
    public: true,
    headers: SignedHeaders,
    rawBody: { contentType: "application/x-www-form-urlencoded", description: "payload=JSON, exactly as Slack signed it." },
    errors: [401, 404],
    handler: async (c) => {
      const read = await signed(c, svc.slack);
      if (read instanceof Response) return read;
      const raw = new URLSearchParams(read.text).get("payload");
      if (raw === null) throw new WardrikError("bad_request", "The body needs a payload field (form-encoded JSON).");
      const parsed = InteractionPayload.safeParse(parseRequestJson(c, raw, "The payload"));
      if (!parsed.success) throw new WardrikError("bad_request", "The payload is not an interaction (it needs type and user.id).");
      await read.slack.inbound.interaction(parsed.data);
      return c.body(null, 200);
    },
  });
}

/** The body, once its signature holds; otherwise the answer to send (404 without Slack, 401 when unsigned). */
async function signed(c: Context<ApiEnv>, slack: SlackService | undefined): Promise<{ slack: SlackService; text: string } | Response> {
  if (!slack)
    return errorResponse(
      c,
      new WardrikError("not_found", "Slack is not set up on this daemon: add a slack: section to config.yaml and restart."),
    );
  const body = new Uint8Array(await c.req.arrayBuffer());
  const problem = slack.verify({
    timestamp: c.req.header("x-slack-request-timestamp"),
    signature: c.req.header("x-slack-signature"),
    body,
  });
  if (problem) return errorResponse(c, new WardrikError("unauthorized", problem), { "WWW-Authenticate": 'SlackSignature realm="wardrik"' });
  return { slack, text: new TextDecoder().decode(body) };
}
