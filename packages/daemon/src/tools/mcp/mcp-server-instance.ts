import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { McpServerEntry } from "../../config/types.js";
import type { Logger } from "../../log/logger.js";
import type { SecretRedactor } from "../../secrets/redactor.js";
import { redactOutcome } from "../redacting-toolset.js";
import type { ToolCallContext, ToolInfo, ToolOutcome } from "../toolset.js";
import { classifyFailure, describeStartFailure, seconds } from "./describe-failure.js";
import { loadedMcpClientSdk } from "./load-mcp-client-sdk.js";
import { McpConnection } from "./mcp-connection.js";
import type { McpOAuthSession } from "./oauth/oauth-session.js";
import { ServerHolders } from "./server-holders.js";
import { closedReason, downMessage, reasonOf, retryText, stderrSuffix, untilAborted, type DownState } from "./server-messages.js";
import { toToolInfo } from "./to-tool-info.js";
import { toToolOutcome } from "./to-tool-outcome.js";

export type McpServerStatus = "up" | "down" | "starting" | "stopped" | "login_needed";

/** The runtime owns call timeouts; the SDK's own request timeout is only a backstop behind it. */
const SDK_TIMEOUT_GRACE_MS = 5_000;
/** `list_changed` often comes in bursts (a server registering several tools); re-list once. */
const RELIST_DEBOUNCE_MS = 50;
/** A server waiting for a login rereads its grant at most this often (a login on another daemon of a cluster). */
const GRANT_RECHECK_MS = 5_000;

type State =
  | { kind: "stopped" }
  | { kind: "starting"; gen: number; conn: McpConnection; ready: Promise<McpConnection> }
  | { kind: "up"; gen: number; conn: McpConnection; since: number }
  | DownState;

export interface InstanceOptions {
  cwd?: string;
  log: Logger;
  redactor: SecretRedactor;
  startTimeoutMs: number;
  listTimeoutMs: number;
  backoffInitialMs: number;
  backoffMaxMs: number;
  stableAfterMs: number;
  stopGraceMs: number;
  holderIdleMs: number;
  jsonDepth: number;
  /** The org's OAuth grant, for a remote server that may ask for a login. */
  auth?: McpOAuthSession;
  /** Why the server cannot run at all: it is never started, and is down with this reason. */
  unusable?: string;
}

/** A server that cannot serve calls right now; the message says which and why. */
class ServerUnavailable extends Error {}

/**
 * One running (or startable) MCP server: its connection's lifecycle, the
 * agents holding it, its cached tool list. A server with static credentials
 * has one instance for every org; a server that logs in with OAuth has one
 * per org, each with that org's grant (see mcp-toolset.ts).
 *
 * The server starts when an awake agent first needs it and stops when no
 * agent holds it any more. A server that fails to start or crashes is
 * `down` with the reason and starts again on a later use once its backoff
 * has passed. One that needs a login is not tried until someone logs in.
 */
export class McpServerInstance {
  private state: State = { kind: "stopped" };
  /** Bumped on every start and stop; callbacks of an older connection are ignored. */
  private gen = 0;
  private failures = 0;
  private grantCheckedAt = 0;
  tools: ToolInfo[] | undefined;
  private readOnlyTools = new Set<string>();
  skippedTools: { tool: string; reason: string }[] = [];
  readonly holders: ServerHolders;
  private relistTimer: NodeJS.Timeout | undefined;
  private readonly closing = new Set<Promise<void>>();
  private closed = false;
  private readonly redact: (text: string) => string;

  constructor(
    readonly namespace: string,
    private readonly entry: McpServerEntry,
    private readonly o: InstanceOptions,
  ) {
    this.redact = (text) => o.redactor.redact(text);
    this.holders = new ServerHolders(o, () => this.stop());
  }

  get auth(): McpOAuthSession | undefined {
    return this.o.auth;
  }

  /** The cached tools; the first list waits for the server, later ones restart a stopped server in the background. */
  async list(agentId: string): Promise<ToolInfo[]> {
    const holder = this.holders.hold(agentId);
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
    const holder = this.holders.hold(ctx.agent);
    holder.inFlight += 1;
    try {
      // Results and errors may quote the server's credentials (or any known secret).
      return redactOutcome(await this.run(tool, args, ctx), this.o.redactor);
    } finally {
      holder.inFlight -= 1;
      holder.lastUsed = Date.now();
    }
  }

  status(): { status: McpServerStatus; reason?: string } {
    if (this.o.unusable !== undefined) return { status: "down", reason: this.o.unusable };
    const s = this.state;
    if (this.o.auth?.blocked() && s.kind !== "up") return { status: "login_needed", reason: this.o.auth.loginNeededMessage() };
    switch (s.kind) {
      case "up":
      case "starting":
        return { status: s.kind };
      case "stopped":
        return { status: "stopped", reason: "not running; it starts when an awake agent needs it" };
      case "down":
        return { status: "down", reason: `${reasonOf(s, "line")}; ${retryText(s.retryAt)}` };
    }
  }

  /** Starts the server if it is not running (for `wardrik mcp ls`); false when it cannot start now. */
  async ensureStarted(): Promise<boolean> {
    return this.connection().then(
      () => true,
      () => false,
    );
  }

  /** A login or logout changed the credentials: drop the connection and any backoff; the next use connects anew. */
  reset(): void {
    this.failures = 0;
    this.grantCheckedAt = 0;
    const s = this.state;
    if (s.kind === "down") this.state = { kind: "stopped" };
    else this.stop("its credentials changed");
  }

  async close(): Promise<void> {
    this.closed = true;
    this.holders.close();
    clearTimeout(this.relistTimer);
    this.stop();
    await Promise.allSettled([...this.closing]);
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
      const result = await conn.callTool(
        tool,
        (args ?? {}) as Record<string, unknown>,
        { signal: ctx.signal, timeout: ctx.timeoutMs + SDK_TIMEOUT_GRACE_MS },
        ctx.traceparent,
      );
      if (this.isCurrent(conn)) this.failures = 0;
      return toToolOutcome(this.namespace, tool, result, this.o.jsonDepth);
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
        // The request never reached the server, or it refused our credentials: the call did not run.
        const login = isUnauthorized(err) ? this.authProblem() : undefined;
        this.connectionLost(conn, login ?? `${conn.target} could not be reached: ${this.redact(f.detail)}`);
        return {
          ok: false,
          kind: "unavailable",
          error: `${server} could not take the call to ${name}: ${login ?? this.redact(f.detail)}.`,
        };
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

  /** Why the server refuses us, when it is about our OAuth grant. */
  private authProblem(): string | undefined {
    const auth = this.o.auth;
    if (!auth) return undefined;
    if (auth.blocked()) return auth.loginNeededMessage();
    return auth.problem ? `MCP server "${this.namespace}" refused the access token, and ${auth.problem}` : undefined;
  }

  private stopped(tool: string): ToolOutcome {
    return {
      ok: false,
      kind: "killed",
      error: `The call to ${this.namespace}/${tool} was stopped; MCP server "${this.namespace}" was told to cancel it.`,
    };
  }

  // ---- the server's state ----

  /** The live connection, starting the server when needed; rejects with the reason when it cannot run. */
  private connection(): Promise<McpConnection> {
    if (this.closed) return Promise.reject(new ServerUnavailable(`MCP server "${this.namespace}" is shut down: the daemon is stopping.`));
    if (this.o.unusable !== undefined)
      return Promise.reject(new ServerUnavailable(`MCP server "${this.namespace}" cannot run: ${this.o.unusable}`));
    const s = this.state;
    if (s.kind === "up") return Promise.resolve(s.conn);
    if (s.kind === "starting") return s.ready;
    const auth = this.o.auth;
    if (auth?.blocked()) {
      // A login may have happened elsewhere (another daemon of the cluster): look again now and then.
      if (Date.now() - this.grantCheckedAt < GRANT_RECHECK_MS) return Promise.reject(new ServerUnavailable(auth.loginNeededMessage()));
      this.grantCheckedAt = Date.now();
      return auth
        .reload()
        .then(() => (auth.blocked() ? Promise.reject(new ServerUnavailable(auth.loginNeededMessage())) : this.connection()));
    }
    if (s.kind === "down" && Date.now() < s.retryAt) return Promise.reject(new ServerUnavailable(downMessage(this.namespace, s)));
    return this.start();
  }

  private restartDue(): boolean {
    const s = this.state;
    return !this.closed && this.o.unusable === undefined && (s.kind === "stopped" || (s.kind === "down" && Date.now() >= s.retryAt));
  }

  private start(): Promise<McpConnection> {
    const gen = ++this.gen;
    const started = Date.now();
    const conn = new McpConnection(this.namespace, this.entry, {
      ...(this.o.cwd ? { cwd: this.o.cwd } : {}),
      ...(this.o.auth ? { fetch: this.o.auth.fetch } : {}),
      log: this.o.log,
      redactor: this.o.redactor,
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
        this.o.log("info", "MCP server started", { server: this.namespace, tools: this.tools?.length ?? 0, ms: Date.now() - started });
        return conn;
      } catch (err) {
        this.track(conn.close());
        if (err instanceof ServerUnavailable || gen !== this.gen) {
          throw err instanceof ServerUnavailable
            ? err
            : new ServerUnavailable(`MCP server "${this.namespace}" was stopped while it started.`);
        }
        const login = isUnauthorized(err) ? this.authProblem() : undefined;
        let reason = login ?? this.redact(describeStartFailure(err, phase, this.o.startTimeoutMs, conn.target));
        const exit = conn.exitText();
        if (exit && !reason.includes(exit)) reason += ` (${exit})`;
        const down = this.markDown(reason, conn);
        throw new ServerUnavailable(login ?? downMessage(this.namespace, down));
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
      this.o.log("warn", "MCP server is down", { server: this.namespace, reason: reasonOf(down, "line"), failures, retry_in_ms: wait }),
    );
    return down;
  }

  private stop(why = this.closed ? "daemon closing" : "no awake agent uses it"): void {
    const s = this.state;
    if (s.kind !== "up" && s.kind !== "starting") return; // a down server keeps its reason and backoff
    this.gen += 1;
    this.state = { kind: "stopped" };
    this.track(s.conn.close());
    this.o.log("info", "MCP server stopped", { server: this.namespace, why });
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
          this.o.log("info", "MCP server's tools changed", { server: this.namespace, tools: this.tools?.length ?? 0 });
        },
        (err: unknown) =>
          this.o.log("warn", "MCP server's tools changed, but listing them failed; keeping the old list", {
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
        this.o.log("warn", r.skipped, { server: this.namespace });
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

  private isCurrent(conn: McpConnection): boolean {
    return this.state.kind === "up" && this.state.conn === conn;
  }

  private track(p: Promise<void>): void {
    this.closing.add(p);
    void p.finally(() => this.closing.delete(p));
  }
}

function isUnauthorized(err: unknown): boolean {
  const sdk = loadedMcpClientSdk();
  return sdk !== undefined && err instanceof sdk.StreamableHTTPError && err.code === 401;
}
