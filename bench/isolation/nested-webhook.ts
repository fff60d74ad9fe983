/** 2 MB of nesting to the public inbound webhook route: unsigned (refused on its signature) and signed (refused as too deep). */
import { createHmac } from "node:crypto";
import { NESTED_BRACKETS, post, type HostileTally, type IsolationKind } from "../isolation-kit.js";

const KEY = Buffer.from("isolation-bench-webhook-key");
const SECRET = `whsec_${KEY.toString("base64")}`;
const body = `{"service":${NESTED_BRACKETS}}`;

export const kind: IsolationKind = {
  name: "nested-webhook",
  hostile: "POST /v1/hooks/default/deploy with 2 MB of nesting, unsigned and signed (Standard Webhooks)",
  prepare: (draft) => {
    draft.files["agents/hooked.md"] =
      `---\ndescription: Woken by a webhook\nmodel: bench\ntriggers:\n  - { webhook: deploy, secret: "${SECRET}", message: "deployed {{service}}" }\n---\nYou answer.\n`;
  },
  attack: async (d) => {
    const tally: HostileTally = {};
    const url = `${d.url}/v1/hooks/default/deploy`;
    await post(tally, url, "[".repeat(2_000_000), { "content-type": "application/json" });
    const id = `msg_${Date.now()}`;
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = createHmac("sha256", KEY).update(`${id}.${timestamp}.${body}`).digest("base64");
    await post(tally, url, body, {
      "content-type": "application/json",
      "webhook-id": id,
      "webhook-timestamp": timestamp,
      "webhook-signature": `v1,${signature}`,
    });
    return tally;
  },
};
