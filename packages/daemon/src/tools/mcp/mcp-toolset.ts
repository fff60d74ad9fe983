import { DEFAULT_JSON_DEPTH } from "@wardrik/protocol";
import type { McpServerEntry } from "../../config/types.js";
import type { SecretRedactor } from "../../secrets/redactor.js";
import type { ToolCallContext, ToolInfo, ToolOutcome, ToolScope, Toolset } from "../toolset.js";
import { McpServerInstance, type McpServerStatus } from "./mcp-server-instance.js";
import { MCP_DEFAULTS, type McpToolsetOptions } from "./mcp-toolset-options.js";
import { mayUseOAuth, type McpOAuth } from "./oauth/mcp-oauth.js";
import { redactOutcome } from "../redacting-toolset.js";
import { displayUrl, redactorFor } from "./redact.js";
import { withStandIns } from "./stand-ins.js";

export type { McpServerStatus };

/** How a server authenticates Wardrik, as `wardrik mcp ls` shows it. */
export type McpAuthState = "none" | "header" | "not_required" | "unknown" | "authorized" | "login_needed";

/** One server as `wardrik mcp ls` shows it, for one org. */
export interface McpServerView {
  name: string;
  transport: "stdio" | "http";
  /** The command (never its arguments) or the URL (without credentials or query). */
  target: string;
  status: McpServerStatus;
  reason?: string;
  /** Tool names (without the namespace); empty until the server has run once. */
  tools: string[];
  auth: McpAuthState;
  login?: { pending: boolean; expires_at?: string; error?: string; authorized_at?: string };
}

/** How long `wardrik mcp ls` waits for a server to start and list its tools. */
const DESCRIBE_START_MS = 15_000;
const DESCRIBE_HOLDER = "wardrik mcp ls";

/**
 * One MCP server from config.yaml as a tool namespace. It belongs to
 * config.yaml's org, whose credentials it carries; other orgs may use it
 * only when its `orgs:` names them (or is "*"). For any other org it lists
 * nothing, calls nothing and shows no status: as if it did not exist.
 *
 * A server with static credentials (a stdio server, or a URL with an
 * Authorization header) runs once for every org that may use it; a remote
 * server that may ask for an OAuth login runs once per org that uses it,
 * with that org's grant, since a grant belongs to one org. Each running
 * server is an McpServerInstance.
 */
export class McpToolset implements Toolset {
  readonly kind = "mcp" as const;
  private readonly shared: McpServerInstance | undefined;
  private readonly perOrg = new Map<string, McpServerInstance>();
  private readonly oauth: McpOAuth | undefined;
  private readonly redactor: SecretRedactor;
  private readonly unsubscribe: (() => void) | undefined;
  /** The orgs that may use the server; undefined: every org. */
  private readonly orgs: ReadonlySet<string> | undefined;

  constructor(
    readonly namespace: string,
    private readonly entry: McpServerEntry,
    private readonly options: McpToolsetOptions = {},
  ) {
    // Only the values of no org, and the server's own: what it answers reaches each org through the registry, which
    // blanks that org's values there (a server granted to several orgs must not tell one org another's values).
    this.redactor = redactorFor(entry, options.redactor?.commonOnly(), options.credentials);
    this.orgs = entry.orgs?.includes("*") ? undefined : new Set([this.home, ...(entry.orgs ?? [])]);
    // A server that cannot run needs no login either.
    this.oauth = options.oauth && mayUseOAuth(entry) && options.unusable === undefined ? options.oauth : undefined;
    if (this.oauth) {
      // A login or a logout: that org's server starts over with the new credentials.
      this.unsubscribe = this.oauth.onChange((org, server) => {
        if (server === namespace) this.perOrg.get(org)?.reset();
      });
    } else {
      this.shared = this.makeInstance(undefined);
    }
  }

  /** config.yaml's org (or the org of `orgs.ORG.mcp`): it owns the server's credentials. */
  private get home(): string {
    return this.options.homeOrg ?? "default";
  }

  // ---- Toolset ----

  offeredTo(org: string): boolean {
    return this.orgs === undefined || this.orgs.has(org);
  }

  /** The server's tools; the first list waits for the server to start, later ones answer from the cache. */
  async list(scope: ToolScope): Promise<ToolInfo[]> {
    if (!this.offeredTo(scope.org)) return [];
    return this.instance(scope.org).list(scope.agentId);
  }

  async call(tool: string, args: unknown, ctx: ToolCallContext): Promise<ToolOutcome> {
    // The registry offers no other org this namespace; this holds even for a caller that skips it.
    if (!this.offeredTo(ctx.org)) return { ok: false, kind: "failed", error: `Unknown tool ${this.namespace}/${tool}.` };
    if (ctx.org === this.home) return this.instance(ctx.org).call(tool, args, ctx);
    // An org the server is lent to cannot hand it the server's credentials (see withStandIns).
    const lent = withStandIns(args, this.redactor);
    const outcome = await this.instance(ctx.org).call(tool, lent.args, ctx);
    return lent.restore ? redactOutcome(outcome, lent.restore) : outcome;
  }

  /** The server's health for `wardrik agent show`, as the agent's org sees it. */
  status(scope?: ToolScope): { name: string; status: McpServerStatus; reason?: string }[] {
    const org = scope?.org ?? this.home;
    return this.offeredTo(org) ? [{ name: this.namespace, ...this.instance(org).status() }] : [];
  }

  skipped(scope?: ToolScope): { tool: string; reason: string }[] {
    const org = scope?.org ?? this.home;
    return this.offeredTo(org) ? this.instance(org).skippedTools : [];
  }

  // ---- lifecycle ----

  /** Marks the server as used by an awake agent, keeping it running. `list` and `call` do this. */
  acquire(scope: ToolScope): void {
    if (this.offeredTo(scope.org)) this.instance(scope.org).holders.hold(scope.agentId);
  }

  /** The agent fell asleep (or was removed): it holds the server no more. The last release stops it. */
  release(scope: ToolScope): void {
    (this.shared ?? this.perOrg.get(scope.org))?.holders.release(scope.agentId);
  }

  /** Stops the server for good (daemon shutdown). */
  async close(): Promise<void> {
    this.unsubscribe?.();
    await Promise.all(this.instances().map((i) => i.close()));
  }

  /** Agents holding the server, for tests and diagnostics. */
  holderIds(): string[] {
    return this.instances().flatMap((i) => i.holders.ids());
  }

  // ---- wardrik mcp ls ----

  /**
   * The server as `org` sees it. With `connect`, a server whose tools are not
   * known yet is started (and stopped again after the usual grace) to list
   * them, unless it waits for a login; a remote server that has never
   * answered is asked whether it wants one.
   */
  async describe(org: string, options: { connect?: boolean } = {}): Promise<McpServerView> {
    const instance = this.instance(org);
    const session = instance.auth;
    if (session) {
      await session.reload();
      if (session.state() === "unknown") await session.server.probe();
    }
    if (options.connect && !instance.tools && !session?.blocked()) {
      const listed = instance.list(DESCRIBE_HOLDER).catch(() => []);
      await Promise.race([listed, new Promise((r) => setTimeout(r, DESCRIBE_START_MS).unref())]);
      instance.holders.release(DESCRIBE_HOLDER);
    }
    const prefix = this.namespace + "/";
    const grant = session?.grant;
    return {
      name: this.namespace,
      transport: this.entry.command !== undefined ? "stdio" : "http",
      target: this.entry.command !== undefined ? this.entry.command : displayUrl(this.entry.url ?? ""),
      ...instance.status(),
      tools: (instance.tools ?? []).map((t) => t.name.slice(prefix.length)),
      auth: session ? session.state() : this.entry.command !== undefined ? "none" : this.entry.headers ? "header" : "none",
      ...(grant && (grant.pending || grant.login_error || grant.authorized_at)
        ? {
            login: {
              pending: grant.pending !== undefined && grant.pending.expires_at > Date.now(),
              ...(grant.pending ? { expires_at: new Date(grant.pending.expires_at).toISOString() } : {}),
              ...(grant.login_error ? { error: grant.login_error } : {}),
              ...(grant.authorized_at ? { authorized_at: grant.authorized_at } : {}),
            },
          }
        : {}),
    };
  }

  // ---- instances ----

  private instance(org: string): McpServerInstance {
    if (this.shared) return this.shared;
    let i = this.perOrg.get(org);
    if (!i) this.perOrg.set(org, (i = this.makeInstance(org)));
    return i;
  }

  private instances(): McpServerInstance[] {
    return this.shared ? [this.shared] : [...this.perOrg.values()];
  }

  private makeInstance(org: string | undefined): McpServerInstance {
    const o = this.options;
    const auth = org !== undefined ? this.oauth?.session(org, this.namespace) : undefined;
    return new McpServerInstance(this.namespace, this.entry, {
      ...(o.cwd ? { cwd: o.cwd } : {}),
      ...(auth ? { auth } : {}),
      ...(o.unusable !== undefined ? { unusable: o.unusable } : {}),
      log: o.log ?? (() => undefined),
      redactor: this.redactor,
      startTimeoutMs: o.startTimeoutMs ?? MCP_DEFAULTS.startTimeoutMs,
      listTimeoutMs: o.listTimeoutMs ?? MCP_DEFAULTS.listTimeoutMs,
      backoffInitialMs: o.backoff?.initialMs ?? MCP_DEFAULTS.backoffInitialMs,
      backoffMaxMs: o.backoff?.maxMs ?? MCP_DEFAULTS.backoffMaxMs,
      stableAfterMs: o.stableAfterMs ?? MCP_DEFAULTS.stableAfterMs,
      stopGraceMs: o.stopGraceMs ?? MCP_DEFAULTS.stopGraceMs,
      holderIdleMs: o.holderIdleMs ?? MCP_DEFAULTS.holderIdleMs,
      jsonDepth: o.jsonDepth ?? DEFAULT_JSON_DEPTH,
    });
  }
}
