import type { AgentRef } from "./connect.js";
import type { DaemonClient } from "./daemon-client.js";

/**
 * connect() and agentByName() of connect.ts, loaded when a command's action
 * runs: the commands' definitions (the command tree, --help, completion)
 * load none of the client, its transport and the protocol.
 */
export async function connected(): Promise<DaemonClient> {
  return (await import("./connect.js")).connect();
}

/** The agent named NAME or ORG/NAME, with the client that reaches it (connect.ts, agentByName). */
export async function agentNamed(name: string): Promise<AgentRef> {
  const { agentByName, connect } = await import("./connect.js");
  return agentByName(connect(), name);
}
