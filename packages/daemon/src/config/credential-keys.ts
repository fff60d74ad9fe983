/**
 * Which config.yaml keys may carry a credential, so that a value they take
 * from `${env:NAME}` (or `${secret:NAME}`) is blanked wherever it shows:
 * everything of an MCP server (its command, arguments, environment, URL,
 * headers, OAuth client: a server takes credentials in any of them, a
 * positional argument or a flag of its own included), a model's API key and
 * headers, Slack's tokens, a subscriber's signing secret, and the telemetry
 * exporter's headers. Other keys (the org, the listen address, a model's
 * name) stay readable: blanking them would hide what the daemon does.
 */
import type { KeyPath } from "./yaml-source.js";

// (An MCP server's `orgs` names orgs, which show everywhere; they are no credential.)

export function carriesCredentials(path: KeyPath): boolean {
  const [top, , key] = path;
  switch (top) {
    case "mcp":
      return path[2] !== "orgs";
    case "orgs":
      // orgs.ORG.mcp.NAME...: an org's own server, as a server of `mcp:`.
      return path[2] === "mcp" && carriesCredentials(path.slice(2));
    case "slack":
      return path[1] === "bot_token" || path[1] === "signing_secret";
    case "models":
      return key === "api_key" || key === "headers";
    case "subscribers":
      return key === "secret";
    case "telemetry":
      return path[1] === "headers";
    default:
      return false;
  }
}
