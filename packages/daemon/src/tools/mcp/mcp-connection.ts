import type { ChildProcess } from "node:child_process";
import { StringDecoder } from "node:string_decoder";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { FetchLike, Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ToolListChangedNotificationSchema, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js";
import type { McpServerEntry } from "../../config/types.js";
import type { Logger } from "../../log/logger.js";
import type { SecretRedactor } from "../../secrets/redactor.js";
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

/**
 * One live session with one MCP server: a stdio child process or a
 * streamable-HTTP session. It is never reused after it closes; the toolset
 * makes a new one to restart the server.
 */
export class McpConnection {
  private readonly client: Client;
  private readonly transport: Transport;
  private readonly stderr: StderrTail | undefined;
  private exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private child: ChildProcess | undefined;
  private closing: Promise<void> | undefined;
  /** What a person can check: the command (never its args or env, which may hold secrets) or the URL. */
  readonly target: string;

  constructor(
    readonly server: string,
    entry: McpServerEntry,
    private readonly opts: McpConnectionOptions,
  ) {
    if (entry.command !== undefined) {
      this.target = `command "${entry.command}"`;
      const stdio = new StdioClientTransport({
        command: entry.command,
        args: entry.args ?? [],
        // Merged by the SDK over its minimal safe environment (HOME, PATH, SHELL, TERM, USER, LOGNAME).
        env: entry.env ?? {},
        stderr: "pipe",
        ...(opts.cwd ? { cwd: opts.cwd } : {}),
      });
      const stderr = new StderrTail(undefined, opts.redactor);
      this.stderr = stderr;
      // A character split between two chunks must not decode as two broken ones (nor hide a secret).
      const decoder = new StringDecoder("utf8");
      stdio.stderr?.on("data", (chunk: Buffer | string) => {
        const released = stderr.push(typeof chunk === "string" ? chunk : decoder.write(chunk));
        if (released.trim()) opts.log("debug", "MCP server stderr", { server, text: released.trimEnd() });
      });
      this.watchExit(stdio);
      this.transport = stdio;
    } else if (entry.url !== undefined) {
      this.target = displayUrl(entry.url);
      this.transport = new StreamableHTTPClientTransport(new URL(entry.url), {
        requestInit: { headers: entry.headers ?? {} },
        fetch: traceHeaderFetch(opts.fetch ?? fetch),
      });
    } else {
      throw new Error(`MCP server "${server}" needs either command (stdio) or url (streamable HTTP)`);
    }
    this.client = new Client(CLIENT_INFO, { capabilities: {} });
    this.client.setNotificationHandler(ToolListChangedNotificationSchema, () => opts.onToolsChanged());
    this.client.onclose = () => {
      if (!this.closing) opts.onClosed();
    };
    this.client.onerror = (err) => opts.log("debug", "MCP transport error", { server, err: opts.redactor.redact(String(err)) });
  }

  get isStdio(): boolean {
    return this.stderr !== undefined;
  }

  /** Starts the process (stdio) and runs the MCP initialize handshake. */
  async open(timeoutMs: number): Promise<void> {
    await this.client.connect(this.transport, { timeout: timeoutMs });
  }

  /** Every tool, following `nextCursor` pages. */
  async listTools(timeoutMs: number): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const res = await this.client.listTools(cursor === undefined ? {} : { cursor }, { timeout: timeoutMs });
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
    return this.client.callTool({ name, arguments: args, ...meta }, undefined, options) as Promise<CallToolResult>;
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
      if (this.transport instanceof StreamableHTTPClientTransport) {
        // Ends the server-side session; best effort, a dead server cannot answer.
        await Promise.race([this.transport.terminateSession().catch(() => undefined), delay(1_000)]);
      }
      await this.client.close().catch(() => undefined);
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
