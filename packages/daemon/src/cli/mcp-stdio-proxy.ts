import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import { WardrikError } from "@wardrik/protocol/errors";
import { readSse } from "@wardrik/sdk/client";

export interface StdioProxyOptions {
  /** The daemon's base URL. */
  url: string;
  token: string;
  /** Another org's agents (admin token only), sent as Wardrik-Org. */
  org?: string;
  /** A line for a person on stderr (stdout carries the protocol). */
  note: (line: string) => void;
}

/** JSON-RPC's "internal error": the daemon could not be reached or answered something that is not MCP. */
const PROXY_ERROR = -32603;

/**
 * A pause between a progress notification and the answer right after it.
 * The SDK's client handles a notification a tick after reading it but an
 * answer at once, so when both arrive in one read the answer retires the
 * progress token first: the progress is lost and reported as an error (some
 * clients even drop the connection for it; typescript-sdk issue 2580).
 */
const NOTIFICATION_GAP_MS = 30;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `wardrik mcp serve`: MCP over stdio for desktop clients, passed on to the
 * daemon's `/v1/mcp` one POST per message (the endpoint is stateless, so
 * nothing here outlives a message). Each request's answer and its progress
 * notifications come back on that POST's stream. A client's
 * `notifications/cancelled` aborts its request's POST: the daemon stops
 * waiting (the agent's turn goes on). Resolves when the client closes stdin.
 */
export async function serveStdioProxy(o: StdioProxyOptions): Promise<void> {
  const endpoint = `${o.url.replace(/\/+$/, "")}/v1/mcp`;
  const stdio = new StdioServerTransport();
  const inflight = new Map<RequestId, AbortController>();
  let protocolVersion: string | undefined;
  const closed = new Promise<void>((resolve) => (stdio.onclose = resolve));
  stdio.onerror = (err) => o.note(`wardrik mcp serve: ${err.message}`);

  const send = (m: JSONRPCMessage) =>
    stdio.send(m).catch((err: unknown) => o.note(`wardrik mcp serve: cannot write to the client: ${String(err)}`));
  const fail = (id: RequestId | undefined, message: string) => {
    if (id === undefined) o.note(`wardrik mcp serve: ${message}`);
    else void send({ jsonrpc: "2.0", id, error: { code: PROXY_ERROR, message } });
  };
  let lastNotificationAt = 0;
  const relay = async (m: JSONRPCMessage) => {
    // Later requests carry the negotiated version, as the streamable HTTP transport asks.
    if (isJSONRPCResultResponse(m) && typeof m.result.protocolVersion === "string") protocolVersion = m.result.protocolVersion;
    if (isJSONRPCNotification(m)) lastNotificationAt = Date.now();
    else if (Date.now() - lastNotificationAt < NOTIFICATION_GAP_MS) await sleep(NOTIFICATION_GAP_MS);
    await send(m);
  };

  const forward = async (msg: JSONRPCMessage) => {
    if (isJSONRPCNotification(msg) && msg.method === "notifications/cancelled") {
      const id = (msg.params as { requestId?: RequestId } | undefined)?.requestId;
      if (id !== undefined) inflight.get(id)?.abort();
      return;
    }
    const id = isJSONRPCRequest(msg) ? msg.id : undefined;
    const ac = new AbortController();
    if (id !== undefined) inflight.set(id, ac);
    try {
      const res = await fetch(endpoint, {
        method: "POST",
        headers: {
          authorization: `Bearer ${o.token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...(o.org ? { "wardrik-org": o.org } : {}),
          ...(protocolVersion ? { "mcp-protocol-version": protocolVersion } : {}),
        },
        body: JSON.stringify(msg),
        signal: ac.signal,
      });
      const type = res.headers.get("content-type") ?? "";
      if (res.status === 202 || !res.body) {
        await res.body?.cancel();
        return;
      }
      if (type.includes("text/event-stream")) {
        for await (const ev of readSse(res.body)) if (ev.data.trim() !== "") await relay(JSON.parse(ev.data) as JSONRPCMessage);
        return;
      }
      const body = (await res.json().catch(() => undefined)) as unknown;
      const messages = (Array.isArray(body) ? body : [body]).filter(
        (m): m is JSONRPCMessage => (m as { jsonrpc?: unknown })?.jsonrpc === "2.0",
      );
      if (messages.length > 0) {
        for (const m of messages) await relay(m);
        return;
      }
      // Not MCP: the daemon's own error (a wrong token, another org's name).
      const why = WardrikError.fromResponse(res.status, body).message;
      fail(id, `The Wardrik daemon at ${o.url} refused the request: ${why}`);
    } catch (err) {
      if (ac.signal.aborted) return;
      const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err instanceof Error ? err.message : String(err));
      fail(id, `Cannot reach the Wardrik daemon at ${o.url}: ${cause}. Is \`wardrik daemon\` running?`);
    } finally {
      if (id !== undefined) inflight.delete(id);
    }
  };

  stdio.onmessage = (msg) => void forward(msg);
  // The client closing our stdin is how it says goodbye; the SDK's transport does not listen for it.
  process.stdin.once("end", () => void stdio.close());
  await stdio.start();
  await closed;
  for (const ac of inflight.values()) ac.abort();
}
