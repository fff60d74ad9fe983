/** Inbound webhooks (`POST /v1/hooks/{org}/{name}`): signed as Standard Webhooks or as GitHub does, wrongly, or not at all. */
import { createHmac } from "node:crypto";
import { httpExchange, type FuzzTarget } from "../exchange.js";
import { fuzzBody, headerValue, randomJson, randomString, wellFormed } from "../random.js";

export const webhooks: FuzzTarget = {
  name: "webhooks",
  async once(r, ctx) {
    const name = r.pick(["deploy", "push", "nope", randomString(r).slice(0, 60) || "x"]);
    const org = r.pick(["default", "default", "other", "nope"]);
    const body = fuzzBody(r, {
      service: randomString(r),
      build: { version: r.int(100) },
      repository: { name: randomString(r) },
      more: randomJson(r, 3),
    });
    const headers: Record<string, string> = { "content-type": "application/json" };
    const roll = r.next();
    if (roll < 0.45) {
      const id = r.chance(0.8) ? `msg_${r.int(1e9)}` : headerValue(randomString(r)).slice(0, 300) || "id";
      const timestamp = String(Math.floor(Date.now() / 1000) - (r.chance(0.9) ? 0 : 3600));
      const key = Buffer.from(ctx.secrets.webhook.slice("whsec_".length), "base64");
      const signature = createHmac("sha256", r.chance(0.9) ? key : Buffer.from("wrong"))
        .update(`${id}.${timestamp}.${body}`)
        .digest("base64");
      Object.assign(headers, { "webhook-id": id, "webhook-timestamp": timestamp, "webhook-signature": `v1,${signature}` });
    } else if (roll < 0.75) {
      headers["x-hub-signature-256"] = `sha256=${createHmac("sha256", ctx.secrets.github).update(body).digest("hex")}`;
      headers["x-github-delivery"] = String(r.int(1e9));
    }
    if (r.chance(0.2)) headers["idempotency-key"] = headerValue(randomString(r)).slice(0, 300) || "k";
    const path = `/v1/hooks/${encodeURIComponent(wellFormed(org))}/${encodeURIComponent(wellFormed(name))}`;
    return httpExchange(ctx, "webhooks", "POST /v1/hooks/{org}/{name}", `${ctx.url}${path}`, { method: "POST", headers, body });
  },
};
