/** 2 MB of nesting to Slack's public events route: signed with the signing secret, and unsigned. */
import { createHmac } from "node:crypto";
import { NESTED_BRACKETS, post, type HostileTally, type IsolationKind } from "../isolation-kit.js";

const SIGNING_SECRET = "isolation-bench-signing-secret";
const body = `{"type":"event_callback","event":${NESTED_BRACKETS}}`;

export const kind: IsolationKind = {
  name: "nested-slack",
  hostile: "POST /v1/slack/events with 2 MB of nesting, signed and unsigned",
  prepare: (draft) => {
    // Nothing is posted to Slack: the API address only has to be well formed.
    draft.config.push(`slack:\n  bot_token: xoxb-bench\n  signing_secret: ${SIGNING_SECRET}\n  api_url: http://127.0.0.1:9/api`);
  },
  attack: async (d) => {
    const tally: HostileTally = {};
    const url = `${d.url}/v1/slack/events`;
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = `v0=${createHmac("sha256", SIGNING_SECRET).update(`v0:${timestamp}:${body}`).digest("hex")}`;
    const headers = { "content-type": "application/json" };
    await post(tally, url, body, { ...headers, "x-slack-request-timestamp": timestamp, "x-slack-signature": signature });
    await post(tally, url, body, headers);
    return tally;
  },
};
