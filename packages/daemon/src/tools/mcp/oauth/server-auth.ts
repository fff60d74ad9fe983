import type { McpServerEntry } from "../../../config/types.js";
import { loadMcpClientSdk } from "../load-mcp-client-sdk.js";

/** How long the probe waits for a server to answer before its need for a login stays unknown. */
const PROBE_TIMEOUT_MS = 10_000;

/** What a 401 answer asked for (RFC 9728 / RFC 6750 `WWW-Authenticate: Bearer ...`). */
export interface Challenge {
  resourceMetadataUrl?: URL;
  scope?: string;
}

/**
 * What is known about one remote MCP server's authorization, the same for
 * every org: whether it asks for a login (it answered 401 to a request
 * without a token) and what its last challenge said. Whether an org has
 * logged in is the org's session (oauth-session.ts).
 */
export class ServerAuth {
  /** undefined: not known yet (never reached). */
  requiresLogin: boolean | undefined;
  challenge: Challenge | undefined;
  private probing: Promise<void> | undefined;

  constructor(
    readonly name: string,
    readonly entry: McpServerEntry & { url: string },
  ) {}

  /** Records a 401 answer: the server asks for a login. */
  async noteUnauthorized(res: Response): Promise<void> {
    this.requiresLogin = true;
    const { extractWWWAuthenticateParams } = await loadMcpClientSdk(`MCP server "${this.name}"`);
    const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(res);
    if (resourceMetadataUrl || scope)
      this.challenge = { ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}), ...(scope ? { scope } : {}) };
  }

  /**
   * Asks the server, without a token, whether it wants one: a JSON-RPC ping
   * (harmless, and refused before anything runs when a token is needed). A
   * 401 means a login is needed; any other answer means it is not; no answer
   * leaves it unknown.
   */
  probe(): Promise<void> {
    return (this.probing ??= (async () => {
      try {
        const res = await fetch(this.entry.url, {
          method: "POST",
          headers: {
            ...(this.entry.headers ?? {}),
            accept: "application/json, text/event-stream",
            "content-type": "application/json",
          },
          body: JSON.stringify({ jsonrpc: "2.0", id: "wardrik-probe", method: "ping" }),
          signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
        });
        await res.body?.cancel().catch(() => undefined);
        if (res.status === 401) await this.noteUnauthorized(res);
        else this.requiresLogin ??= false;
      } catch {
        // Unreachable: the connection attempts say why; the need for a login stays unknown.
      } finally {
        this.probing = undefined;
      }
    })());
  }
}
