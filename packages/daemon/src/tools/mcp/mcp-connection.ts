import type { ChildProcess } from "node:child_process";
import { StringDecoder } from "node:string_decoder";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { FetchLike, Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { McpServerEntry } from "../../config/types.js";
import type { Logger } from "../../log/logger.js";
import type { SecretRedactor } from "../../secrets/redactor.js";
import { loadMcpClientSdk, type McpClientSdk } from "./load-mcp-client-sdk.js";
import { displayUrl } from "./redact.js";
import { StderrTail } from "./stderr-tail.js";
import { traceHeaderFetch } from "./trace-header-fetch.js";

/** A server that pages its tool list forever is broken; stop after this many pages. */
const MAX_LIST_PAGES = 100;
const CLIENT_INFO = { name: "wardrik", version: "0.1.0" };

export interface McpConnectionOptions {
  cwd?: string;
  /** Makes the HTTP requests of a streamable-HTTP server (the OAuth session adds its bearer token). */
  fetch?: FetchLike;
  log: Logger;
  redactor: SecretRedactor;
  /** The connection closed without `close()` being called: the process exited, or the transport gave up. */
  onClosed: () => void;
  /** The server sent `notifications/tools/list_changed`. */
  onToolsChanged: () => void;
}

/** The SDK's side of a session, made once the SDK is loaded. */
interface Session {
  client: Client;
  transport: Transport;
  /** Set for a streamable-HTTP server, whose session is ended on close. */
  http?: StreamableHTTPClientTransport;
}

/**
 * One live session with one MCP server: a stdio child process or a
 * streamable-HTTP session. It is never reused after it closes; the toolset
 * makes a new one to restart the server. The MCP SDK is loaded by the first
 * `open()` of the process, not before.
 */
export class McpConnection {
  private session: Session | undefined;
  private readonly stderr: StderrTail | undefined;
  private exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private child: ChildProcess | undefined;
  private closing: Promise<void> | undefined;
  /** What a person can check: the command (never its args or env, which may hold secrets) or the URL. */
  readonly target: string;

  constructor(
    readonly server: string,
    private readonly entry: McpServerEntry,
    private readonly opts: McpConnectionOptions,
  ) {
    if (entry.command !== undefined) {
      this.target = `command "${entry.command}"`;
      this.stderr = new StderrTail(undefined, opts.redactor);
    } else if (entry.url !== undefined) {
      this.target = displayUrl(entry.url);
    } else {
      throw new Error(`MCP server "${server}" needs either command (stdio) or url (streamable HTTP)`);
    }
  }

  /** The SDK's client and transport for this server, wired to the callbacks. */
  private connect(sdk: McpClientSdk): Session {
    const { entry, opts, server } = this;
    let session: Session;
    const client = new sdk.Client(CLIENT_INFO, { capabilities: {} });
    if (entry.command !== undefined) {
      const stdio = new sdk.StdioClientTransport({
        command: entry.command,
        args: entry.args ?? [],
        // Merged by the SDK over its minimal safe environment (HOME, PATH, SHELL, TERM, USER, LOGNAME).
        env: entry.env ?? {},
        stderr: "pipe",
        ...(opts.cwd ? { cwd: opts.cwd } : {}),
      });
      const stderr = this.stderr!;
      // A character split between two chunks must not decode as two broken ones (nor hide a secret).
      const decoder = new StringDecoder("utf8");
      stdio.stderr?.on("data", (chunk: Buffer | string) => {
        const released = stderr.push(typeof chunk === "string" ? chunk : decoder.write(chunk));
        if (released.trim()) opts.log("debug", "MCP server stderr", { server, text: released.trimEnd() });
      });
      this.watchExit(stdio);
      session = { client, transport: stdio };
    } else {
      const http = new sdk.StreamableHTTPClientTransport(new URL(entry.url!), {
        requestInit: { headers: entry.headers ?? {} },
        fetch: traceHeaderFetch(opts.fetch ?? fetch),
      });
      session = { client, transport: http, http };
    }
    client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, () => opts.onToolsChanged());
    client.onclose = () => {
      if (!this.closing) opts.onClosed();
    };
    client.onerror = (err) => opts.log("debug", "MCP transport error", { server, err: opts.redactor.redact(String(err)) });
    return session;
  }

  get isStdio(): boolean {
    return this.stderr !== undefined;
  }

  /** Starts the process (stdio) and runs the MCP initialize handshake. */
  async open(timeoutMs: number): Promise<void> {
    const sdk = await loadMcpClientSdk(`MCP server "${this.server}"`);
    // Closed while the SDK loaded: nothing was started, nothing is left to stop.
    if (this.closing) throw new Error(`the connection to ${this.target} closed`);
    this.session = this.connect(sdk);
    await this.session.client.connect(this.session.transport, { timeout: timeoutMs });
  }

  /** The session `open()` made; listing or calling before it is a bug of the caller. */
  private get live(): Session {
    if (!this.session) throw new Error(`the connection to ${this.target} is not open`);
    return this.session;
  }

  /** Every tool, following `nextCursor` pages. */
  async listTools(timeoutMs: number): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const res = await this.live.client.listTools(cursor === undefined ? {} : { cursor }, { timeout: timeoutMs });
      tools.push(...res.tools);
      cursor = res.nextCursor;
      if (!cursor) return tools;
    }
    this.opts.log("warn", "MCP server paged its tool list too often; using the first pages", {
      server: this.server,
      pages: MAX_LIST_PAGES,
    });
    return tools;
  }

  /**
   * `options.signal` aborting makes the SDK send `notifications/cancelled` for this request.
   * `traceparent` goes in `params._meta`, where MCP's trace context conventions put it.
   */
  callTool(name: string, args: Record<string, unknown>, options: RequestOptions, traceparent?: string): Promise<CallToolResult> {
    const meta = traceparent === undefined ? {} : { _meta: { traceparent } };
    return this.live.client.callTool({ name, arguments: args, ...meta }, undefined, options) as Promise<CallToolResult>;
  }

  /** How the process ended, such as "exit code 1", or "" when unknown or still running. */
  exitText(): string {
    if (!this.exit) return "";
    if (this.exit.signal) return `killed by ${this.exit.signal}`;
    return this.exit.code === null ? "" : `exit code ${this.exit.code}`;
  }

  /** The end of what the server wrote to stderr, secrets blanked; "" when nothing. */
  stderrTail(): string {
    return this.stderr ? this.stderr.tail() : "";
  }

  close(): Promise<void> {
    return (this.closing ??= (async () => {
      const session = this.session;
      if (session?.http) {
        // Ends the server-side session; best effort, a dead server cannot answer.
        await Promise.race([session.http.terminateSession().catch(() => undefined), delay(1_000)]);
      }
      await session?.client.close().catch(() => undefined);
      await this.reap();
    })());
  }

  /**
   * Waits until a stdio server's process has exited, ending it if need be.
   * The SDK's own close returns at once when it already started closing (as
   * it does when initialize fails), so without this a server that ignores the
   * end of its input outlived the daemon (and the test run).
   */
  private async reap(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<true>((resolve) => child.once("exit", () => resolve(true)));
    // The SDK ended its stdin and escalates after 2 s; give it that long, then finish the job here.
    if (await Promise.race([exited, delay(2_500).then(() => false)])) return;
    child.kill("SIGTERM");
    if (await Promise.race([exited, delay(2_000).then(() => false)])) return;
    child.kill("SIGKILL");
    await exited;
  }

  /**
   * The SDK's stdio transport discards the exit code, which is what tells a
   * person why a server died; read it from the child process. Guarded: if a
   * later SDK renames the field, messages just lose the code.
   */
  private watchExit(stdio: StdioClientTransport): void {
    const start = stdio.start.bind(stdio);
    stdio.start = async () => {
      await start();
      const child = (stdio as unknown as { _process?: ChildProcess })._process;
      this.child = child;
      child?.once("exit", (code, signal) => (this.exit = { code, signal }));
    };
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
