import { z } from "zod";
import { HookAccepted, WardrikError, isValidName } from "@wardrik/protocol";
import { errorResponse, toWardrikError } from "./http-errors.js";
import { parseRequestJson } from "./untrusted-json.js";
import type { RouteTable } from "./route-table.js";
import type { ApiServices } from "./services.js";

const Name = z.string().refine(isValidName, { error: "must be 1-55 letters, digits, _ or -" });

const HookHeaders = z.object({
  "webhook-id": z.string().max(255).optional().describe("Standard Webhooks: the delivery's ID; a repeat queues nothing new"),
  "webhook-timestamp": z.string().optional().describe("Standard Webhooks: seconds since 1970; at most 5 minutes off"),
  "webhook-signature": z.string().optional().describe("Standard Webhooks: v1,<base64 HMAC-SHA256 of id.timestamp.body>"),
  "X-Hub-Signature-256": z.string().optional().describe("GitHub: sha256=<hex HMAC-SHA256 of the body>"),
  "X-GitHub-Delivery": z
    .string()
    .max(255)
    .optional()
    .describe("GitHub: not signed, so not what decides a repeat; the same signature and body within 24 hours is one"),
});

/** Inbound webhooks: `webhook:` triggers of agents' files, checked by signature instead of a bearer token. */
export function registerHookRoutes(routes: RouteTable, svc: ApiServices): void {
  routes.add({
    method: "post",
    path: "/v1/hooks/{org}/{name}",
    operationId: "postWebhook",
    tags: ["webhooks"],
    summary: "Deliver a signed webhook to the agents whose trigger has this name; each queues its message",
    description:
      "Needs no bearer token: the request is signed with the trigger's secret, as Standard Webhooks specifies or as GitHub does (X-Hub-Signature-256). A missing or wrong signature is 401 and queues nothing. Only what is signed decides what is a repeat, which queues nothing new and is answered with the first message (replayed: true): webhook-id for Standard Webhooks; for GitHub's format the signature and body, within 24 hours. Idempotency-Key is ignored here. The JSON body is the data of the trigger's message template.",
    public: true,
    params: { org: Name, name: Name },
    headers: HookHeaders,
    // Read raw: the signature is checked over these bytes before anything parses them.
    rawBody: { contentType: "application/json", description: "Any JSON (empty counts as {}), exactly as it was signed" },
    response: HookAccepted,
    status: 202,
    errors: [401, 409],
    handler: async (c, { params }) => {
      try {
        const text = await c.req.text();
        const accepted = await svc.events.acceptWebhook({
          org: params.org,
          name: params.name,
          header: (name) => c.req.header(name),
          body: text,
          json: () => (text.trim() === "" ? {} : parseRequestJson(c, text)),
        });
        return c.json(accepted, 202);
      } catch (err) {
        const e = toWardrikError(err);
        // Not a bearer-token realm: the answer says a signature is what is missing.
        if (e.code === "unauthorized") return errorResponse(c, e, { "WWW-Authenticate": 'Signature realm="wardrik webhooks"' });
        throw e instanceof WardrikError ? e : err;
      }
    },
  });
}
