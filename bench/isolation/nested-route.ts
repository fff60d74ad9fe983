/** 2 MB of nested brackets in the body of a route behind a token (a message to an agent). */
import { NESTED_BRACKETS, addTargetAgent, postToTarget, type IsolationKind } from "../isolation-kit.js";

const body = `{"text":"hi","conversation":${NESTED_BRACKETS}}`;

export const kind: IsolationKind = {
  name: "nested-route",
  hostile: "POST /v1/agents/{id}/messages with 2 MB of nested brackets",
  prepare: addTargetAgent,
  attack: (d) => postToTarget({}, d, body),
};
