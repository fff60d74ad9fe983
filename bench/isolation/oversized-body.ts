/** A body over the 2 MiB limit: 3 MB sent in full to a route behind a token. */
import { addTargetAgent, postToTarget, type IsolationKind } from "../isolation-kit.js";

const body = `{"text":"${"x".repeat(3_000_000)}"}`;

export const kind: IsolationKind = {
  name: "oversized-body",
  hostile: "POST /v1/agents/{id}/messages with a 3 MB body",
  prepare: addTargetAgent,
  attack: (d) => postToTarget({}, d, body),
};
