/** 2 MB of nesting in a JSON-RPC message to the agents' MCP endpoint. */
import { NESTED_BRACKETS, post, type HostileTally, type IsolationKind } from "../isolation-kit.js";

const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_agents","arguments":{"x":${NESTED_BRACKETS}}}}`;

export const kind: IsolationKind = {
  name: "nested-mcp",
  hostile: "POST /v1/mcp with a tools/call whose arguments hold 2 MB of nesting",
  attack: async (d) => {
    const tally: HostileTally = {};
    await post(tally, `${d.url}/v1/mcp`, body, {
      authorization: `Bearer ${d.token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    });
    return tally;
  },
};
