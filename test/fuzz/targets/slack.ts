/** Slack's two public routes: Events API bodies and interaction payloads, signed with the signing secret or not. */
import { createHmac } from "node:crypto";
import { httpExchange, type FuzzTarget } from "../exchange.js";
import { fuzzBody, randomJson, randomString } from "../random.js";

export const slack: FuzzTarget = {
  name: "slack",
  async once(r, ctx) {
    const interaction = r.chance(0.4);
    const event = {
      type: r.pick(["event_callback", "url_verification", "app_rate_limited", "nope"]),
      challenge: randomString(r),
      event_id: `Ev${r.int(1_000_000)}`,
      event: {
        type: r.pick(["app_mention", "message", "reaction_added"]),
        channel: r.pick(["C0123ABCD", "C0NOPE"]),
        user: "U0456EFGH",
        text: randomString(r),
        ts: `${r.int(2e9)}.000100`,
      },
    };
    const payload = {
      type: r.pick(["block_actions", "view_submission", "nope"]),
      user: { id: r.pick(["U0456EFGH", "U0999OTHER"]) },
      actions: [{ action_id: r.pick(["approve", "deny", "nope"]), value: r.pick([`call_${r.int(1e6)}`, randomString(r)]) }],
      channel: { id: "C0123ABCD" },
      extra: randomJson(r, 2),
    };
    const json = fuzzBody(r, interaction ? payload : event);
    const body = interaction ? (r.chance(0.9) ? `payload=${encodeURIComponent(json)}` : json) : json;
    const now = Math.floor(Date.now() / 1000);
    const timestamp = String(r.chance(0.9) ? now : r.pick([now - 3600, 0, -1]));
    const headers: Record<string, string> = { "content-type": interaction ? "application/x-www-form-urlencoded" : "application/json" };
    if (r.chance(0.8)) {
      headers["x-slack-request-timestamp"] = timestamp;
      const secret = r.chance(0.9) ? ctx.secrets.slack : "wrong";
      headers["x-slack-signature"] = `v0=${createHmac("sha256", secret).update(`v0:${timestamp}:${body}`).digest("hex")}`;
    }
    const path = interaction ? "/v1/slack/interactions" : "/v1/slack/events";
    return httpExchange(ctx, "slack", `POST ${path}`, `${ctx.url}${path}`, { method: "POST", headers, body });
  },
};
