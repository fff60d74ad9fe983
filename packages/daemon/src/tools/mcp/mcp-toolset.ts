import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { McpServerEntry } from "../../config/types.js";
import type { SecretRedactor } from "../../secrets/redactor.js";
import { redactOutcome } from "../redacting-toolset.js";
import type { ToolCallContext, ToolInfo, ToolOutcome, ToolScope, Toolset } from "../toolset.js";
import { classifyFailure, describeStartFailure, seconds } from "./describe-failure.js";
import { McpConnection } from "./mcp-connection.js";
import type { Logger } from "../../log/logger.js";
import { MCP_DEFAULTS, type McpToolsetOptions } from "./mcp-toolset-options.js";
import { redactorFor } from "./redact.js";
import { toToolInfo } from "./to-tool-info.js";
import { toToolOutcome } from "./to-tool-outcome.js";
import { McpHolders, type Holder } from "./mcp-holders.js";
import { closedReason, downMessage, reasonOf, retryText, stderrSuffix, untilAborted, type DownState } from "./mcp-messages.js";

export type McpServerStatus = "up" | "down" | "starting" | "stopped";

/** The runtime owns call timeouts; the SDK's own request timeout is only a backstop behind it. */
const SDK_TIMEOUT_GRACE_MS = 5_000;
/** `list_changed` often comes in bursts (a server registering several tools); re-list once. */
const RELIST_DEBOUNCE_MS = 50;

type State =
  | { kind: "stopped" }
  | { kind: "starting"; gen: number; conn: McpConnection; ready: Promise<McpConnection> }
  | { kind: "up"; gen: number; conn: McpConnection; since: number }
  /** `conn`: the failed connection, whose stderr tail is read when a message is built (it may still be arriving). */
  | DownState;

/** A server that cannot serve calls right now; the message says which and why. */
class ServerUnavailable extends Error {}

/**
 * One MCP server from config.yaml as a tool namespace.
 *
 * Lifecycle: the server starts when an awake agent first needs it (a
 * `list` or `call` acquires it for that agent) and stops when no agent
 * holds it any more (`release`, or no use for `holderIdleMs`). A server
 * that fails to start or crashes is `down` with the reason; it is started
 * again on the next use once its backoff has passed. Other servers are
 * separate toolsets and never notice.
 *
 * The tool list is cached (the runtime lists on every model step) and
 * refreshed when the server sends `notifications/tools/list_changed`. The
 * cache outlives the process, so agents keep seeing a stopped or crashed
 * server's tools, and calling one says why it cannot run.
 */
export class McpToolset implements Toolset {
  readonly kind = "mcp" as const;
  private state: State = { kind: "stopped" };
  /** Bumped on every start and stop; callbacks of an older connection are ignored. */
  private gen = 0;
  private failures = 0;
  private tools: ToolInfo[] | undefined;
  private readOnlyTools = new Set<string>();
  private skippedTools: { tool: string; reason: string }[] = [];
  private readonly holders: McpHolders;
  private relistTimer: NodeJS.Timeout | undefined;
  private readonly closing = new Set<Promise<void>>();
  private closed = false;
  private readonly log: Logger;
  private readonly redactor: SecretRedactor;
  private readonly redact: (text: string) => string;
  private readonly o: Required<Omit<McpToolsetOptions, "log" | "cwd" | "backoff" | "redactor">> & {
    backoffInitialMs: number;
    backoffMaxMs: number;
  };

  constructor(
    readonly namespace: string,
    private readonly entry: McpServerEntry,
    private readonly options: McpToolsetOptions = {},
  ) {
    this.log = options.log ?? (() => undefined);
    this.redactor = redactorFor(entry, options.redactor);
    this.redact = (text) => this.redactor.redact(text);
    this.o = {
      startTimeoutMs: options.startTimeoutMs ?? MCP_DEFAULTS.startTimeoutMs,
      listTimeoutMs: options.listTimeoutMs ?? MCP_DEFAULTS.listTimeoutMs,
      backoffInitialMs: options.backoff?.initialMs ?? MCP_DEFAULTS.backoffInitialMs,
      backoffMaxMs: options.backoff?.maxMs ?? MCP_DEFAULTS.backoffMaxMs,
      stableAfterMs: options.stableAfterMs ?? MCP_DEFAULTS.stableAfterMs,
      stopGraceMs: options.stopGraceMs ?? MCP_DEFAULTS.stopGraceMs,
      holderIdleMs: options.holderIdleMs ?? MCP_DEFAULTS.holderIdleMs,
    };
    this.holders = new McpHolders(this.o, () => this.stop());
  }

  // ---- Toolset ----

  /**
   * The server's tools. Acquires the server for the agent; the first list
   * waits for the server to start, later ones answer from the cache (and
   * restart a stopped server in the background, ready for the next call).
   */
  async list(scope: ToolScope): Promise<ToolInfo[]> {
    const holder = this.hold(scope.agentId);
    if (this.tools) {
      if (this.restartDue()) this.connection().catch(() => undefined);
      return this.tools;
    }
    holder.inFlight += 1;
    try {
      await this.connection().catch(() => undefined);
    } finally {
      holder.inFlight -= 1;
      holder.lastUsed = Date.now();
    }
    return this.tools ?? [];
  }

  async call(tool: string, args: unknown, ctx: ToolCallContext): Promise<ToolOutcome> {
    const holder = this.hold(ctx.agent);
    holder.inFlight += 1;
    try {
      // Results and errors may quote the server's credentials (or any known secret).
      return redactOutcome(await this.run(tool, args, ctx), this.redactor);
    } finally {
      holder.inFlight -= 1;
      holder.lastUsed = Date.now();
    }
  }

  /** The server's health for `wardrik agent show`. The same for every agent: one server serves them all. */
  status(_scope?: ToolScope): { name: string; status: McpServerStatus; reason?: string }[] {
    const s = this.state;
    const name = this.namespace;
    switch (s.kind) {
      case "up":
      case "starting":
        return [{ name, status: s.kind }];
      case "stopped":
        return [{ name, status: "stopped", reason: "not running; it starts when an awake agent needs it" }];
      case "down":
        return [{ name, status: "down", reason: `${reasonOf(s, "line")}; ${retryText(s.retryAt)}` }];
    }
  }

  // ---- lifecycle ----

  /** Marks the server as used by an awake agent, keeping it running. `list` and `call` do this. */
  acquire(scope: ToolScope): void {
    this.hold(scope.agentId);
  }

  private hold(agentId: string): Holder {
    if (this.closed) return { lastUsed: 0, inFlight: 0 }; // nothing to keep running
    return this.holders.hold(agentId);
  }

  /** The agent fell asleep (or was removed): it holds the server no more. The last release stops it. */
  release(scope: ToolScope): void {
    this.holders.release(scope.agentId);
  }

  /** Stops the server for good (daemon shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.relistTimer);
    this.holders.clear();
    this.stop();
    await Promise.allSettled([...this.closing]);
  }

  /** Agents holding the server, for tests and diagnostics. */
  holderIds(): string[] {
    return this.holders.ids();
  }

  // ---- calls ----

  private async run(tool: string, args: unknown, ctx: ToolCallContext): Promise<ToolOutcome> {
    if (args !== undefined && args !== null && (typeof args !== "object" || Array.isArray(args))) {
      return { ok: false, kind: "failed", error: `The arguments of ${this.namespace}/${tool} must be a JSON object.` };
    }
    if (ctx.signal.aborted) return this.stopped(tool);
    let conn: McpConnection;
    try {
      conn = await untilAborted(this.connection(), ctx.signal);
    } catch (err) {
      if (ctx.signal.aborted) return this.stopped(tool);
      return { ok: false, kind: "unavailable", error: err instanceof Error ? err.message : String(err) };
    }
    try {
      const options = { signal: ctx.signal, timeout: ctx.timeoutMs + SDK_TIMEOUT_GRACE_MS };
      const result = await conn.callTool(tool, (args ?? {}) as Record<string, unknown>, options, ctx.traceparent);
      if (this.isCurrent(conn)) this.failures = 0;
      return toToolOutcome(this.namespace, tool, result);
    } catch (err) {
      if (ctx.signal.aborted) return this.stopped(tool);
      return this.callFailed(conn, tool, err, ctx.timeoutMs);
    }
  }

  private async callFailed(conn: McpConnection, tool: string, err: unknown, timeoutMs: number): Promise<ToolOutcome> {
    const f = classifyFailure(err);
    const name = `${this.namespace}/${tool}`;
    const server = `MCP server "${this.namespace}"`;
    switch (f.kind) {
      case "refused":
        return { ok: false, kind: "failed", error: `${server} refused the call to ${name}: ${this.redact(f.detail)}` };
      case "invalid":
        return {
          ok: false,
          kind: "failed",
          error: `${server} answered the call to ${name} with an invalid result: ${this.redact(f.detail)}`,
        };
      case "timeout":
        return { ok: false, kind: "timeout", error: `${server} did not answer the call to ${name} within ${seconds(timeoutMs)}.` };
      case "unreachable": {
        // The request never reached the server: the call did not run.
        this.connectionLost(conn, `${conn.target} could not be reached: ${this.redact(f.detail)}`);
        return { ok: false, kind: "unavailable", error: `${server} could not take the call to ${name}: ${this.redact(f.detail)}.` };
      }
      case "closed":
      case "transport": {
        const why = f.kind === "closed" ? closedReason(conn) : `the connection to ${conn.target} failed: ${this.redact(f.detail)}`;
        this.connectionLost(conn, why);
        // The process's last stderr lines may still be in flight when the session closes.
        await new Promise((resolve) => setImmediate(resolve));
        const error = `${server} stopped during the call to ${name}: ${why}${stderrSuffix(conn)}\nIt will be restarted on a later use.`;
        // A read-only call is safe to try again; any other call may have had its effect.
        return { ok: false, kind: this.readOnlyTools.has(tool) ? "failed" : "lost", error };
      }
    }
  }

  private stopped(tool: string): ToolOutcome {
    return {
      ok: false,
      kind: "killed",
      error: `The call to ${this.namespace}/${tool} was stopped; MCP server "${this.namespace}" was told to cancel it.`,
    };
  }

  // ---- the server's state ----

  /** The live connection, starting the server when needed; rejects with the reason when it is down. */
  private connection(): Promise<McpConnection> {
    if (this.closed) return Promise.reject(new ServerUnavailable(`MCP server "${this.namespace}" is shut down: the daemon is stopping.`));
    const s = this.state;
    if (s.kind === "up") return Promise.resolve(s.conn);
    if (s.kind === "starting") return s.ready;
    if (s.kind === "down" && Date.now() < s.retryAt) return Promise.reject(new ServerUnavailable(downMessage(this.namespace, s)));
    return this.start();
  }

  private restartDue(): boolean {
    const s = this.state;
    return !this.closed && (s.kind === "stopped" || (s.kind === "down" && Date.now() >= s.retryAt));
  }

  private start(): Promise<McpConnection> {
    const gen = ++this.gen;
    const started = Date.now();
    const conn = new McpConnection(this.namespace, this.entry, {
      ...(this.options.cwd ? { cwd: this.options.cwd } : {}),
      log: this.log,
      redactor: this.redactor,
      onClosed: () => this.connectionLost(conn, closedReason(conn)),
      onToolsChanged: () => this.scheduleRelist(conn),
    });
    let phase: "initialize" | "tools/list" = "initialize";
    const ready = (async () => {
      try {
        await conn.open(this.o.startTimeoutMs);
        phase = "tools/list";
        const tools = await conn.listTools(this.o.startTimeoutMs);
        if (gen !== this.gen) throw new ServerUnavailable(`MCP server "${this.namespace}" was stopped while it started.`);
        this.setTools(tools);
        this.state = { kind: "up", gen, conn, since: Date.now() };
        this.log("info", "MCP server started", { server: this.namespace, tools: this.tools?.length ?? 0, ms: Date.now() - started });
        return conn;
      } catch (err) {
        this.track(conn.close());
        if (err instanceof ServerUnavailable || gen !== this.gen) {
          throw err instanceof ServerUnavailable
            ? err
            : new ServerUnavailable(`MCP server "${this.namespace}" was stopped while it started.`);
        }
        let reason = this.redact(describeStartFailure(err, phase, this.o.startTimeoutMs, conn.target));
        const exit = conn.exitText();
        if (exit && !reason.includes(exit)) reason += ` (${exit})`;
        const down = this.markDown(reason, conn);
        throw new ServerUnavailable(downMessage(this.namespace, down));
      }
    })();
    // Background starts (from `list`) may have no one awaiting them.
    ready.catch(() => undefined);
    this.state = { kind: "starting", gen, conn, ready };
    return ready;
  }

  /** The live connection ended without us closing it. Ignored for connections already replaced. */
  private connectionLost(conn: McpConnection, why: string): void {
    const s = this.state;
    if (s.kind !== "up" || s.conn !== conn) return;
    if (Date.now() - s.since >= this.o.stableAfterMs) this.failures = 0;
    this.gen += 1;
    this.markDown(why, conn);
    this.track(conn.close());
  }

  private markDown(reason: string, conn: McpConnection): DownState {
    this.failures += 1;
    const wait = Math.min(this.o.backoffMaxMs, this.o.backoffInitialMs * 2 ** (this.failures - 1));
    const down = { kind: "down" as const, reason, conn, retryAt: Date.now() + wait };
    this.state = down;
    const failures = this.failures;
    setImmediate(() =>
      this.log("warn", "MCP server is down", { server: this.namespace, reason: reasonOf(down, "line"), failures, retry_in_ms: wait }),
    );
    return down;
  }

  private stop(): void {
    const s = this.state;
    if (s.kind !== "up" && s.kind !== "starting") return; // a down server keeps its reason and backoff
    this.gen += 1;
    this.state = { kind: "stopped" };
    this.track(s.conn.close());
    this.log("info", "MCP server stopped", { server: this.namespace, why: this.closed ? "daemon closing" : "no awake agent uses it" });
  }

  private scheduleRelist(conn: McpConnection): void {
    if (this.relistTimer) clearTimeout(this.relistTimer);
    this.relistTimer = setTimeout(() => {
      this.relistTimer = undefined;
      if (!this.isCurrent(conn)) return;
      conn.listTools(this.o.listTimeoutMs).then(
        (tools) => {
          if (!this.isCurrent(conn)) return;
          this.setTools(tools);
          this.log("info", "MCP server's tools changed", { server: this.namespace, tools: this.tools?.length ?? 0 });
        },
        (err: unknown) =>
          this.log("warn", "MCP server's tools changed, but listing them failed; keeping the old list", {
            server: this.namespace,
            err: this.redact(String(err)),
          }),
      );
    }, RELIST_DEBOUNCE_MS).unref();
  }

  private setTools(tools: Tool[]): void {
    const infos: ToolInfo[] = [];
    const readOnly = new Set<string>();
    const skipped: { tool: string; reason: string }[] = [];
    for (const t of tools) {
      const r = toToolInfo(this.namespace, t);
      if ("skipped" in r) {
        this.log("warn", r.skipped, { server: this.namespace });
        skipped.push({ tool: t.name, reason: r.skipped });
        continue;
      }
      infos.push(r.info);
      if (r.info.readOnly) readOnly.add(t.name);
    }
    this.tools = infos;
    this.readOnlyTools = readOnly;
    this.skippedTools = skipped;
  }

  skipped(_scope?: ToolScope): { tool: string; reason: string }[] {
    return this.skippedTools;
  }

  private isCurrent(conn: McpConnection): boolean {
    return this.state.kind === "up" && this.state.conn === conn;
  }

  private track(p: Promise<void>): void {
    this.closing.add(p);
    void p.finally(() => this.closing.delete(p));
  }
}
