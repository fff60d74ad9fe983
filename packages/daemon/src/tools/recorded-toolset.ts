import type { ReplaySource } from "@wardrik/protocol";
import { compileToolPattern } from "../policy/match-tool.js";
import type { ToolCallContext, ToolInfo, ToolOutcome, ToolScope, Toolset, ToolsetKind } from "./toolset.js";

/**
 * The toolset of a replay: it answers calls from a record of earlier calls
 * instead of running tools. A call with the same tool and the same arguments
 * as a recorded one gets that call's outcome; a tool named live runs for real
 * when the record has no answer; anything else gets a clear failure that says
 * the call did not run. Replays of recorded turns and eval cases with
 * scripted tool results both use it: a scripted result is a recorded call
 * that matches any arguments.
 */

/** One answer the record holds. */
export interface RecordedCall {
  /** `namespace/tool`. */
  tool: string;
  /** The arguments it was called with; undefined matches any arguments (a scripted result). */
  args?: unknown;
  outcome: ToolOutcome;
  /** The recorded turn it belongs to: that turn's calls are served first while it is replayed. */
  turn?: number;
  readOnly?: boolean;
  idempotent?: boolean;
}

/** How a call was answered, told to the replay as it happens. */
export interface ServedCall {
  source: ReplaySource;
  /** The record holds a call with this tool and these arguments. */
  matched: boolean;
}

/** JSON with object keys sorted, so arguments match whatever order the model wrote them in. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value ?? null, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/**
 * The record's calls, looked up by tool and arguments. Calls with the same
 * key are served in the order they were recorded (the current turn's first);
 * once all were served, the last one answers again.
 */
export class CallRecord {
  /** The recorded turn being replayed now. */
  turn: number | undefined;
  private readonly used = new Set<RecordedCall>();

  constructor(
    readonly calls: readonly RecordedCall[],
    /** "record": a replay of recorded turns; "script": an eval case's scripted results. */
    readonly kind: "record" | "script",
  ) {}

  take(tool: string, args: unknown): RecordedCall | undefined {
    const key = canonicalJson(args);
    const same = this.calls.filter((c) => c.tool === tool && (c.args === undefined || canonicalJson(c.args) === key));
    if (same.length === 0) return undefined;
    const ordered = [...same.filter((c) => c.turn === this.turn), ...same.filter((c) => c.turn !== this.turn)];
    const next = ordered.find((c) => !this.used.has(c)) ?? ordered[0]!;
    this.used.add(next);
    return next;
  }

  /** Whether the record holds a call with this tool and these arguments (without serving it). */
  has(tool: string, args: unknown): boolean {
    const key = canonicalJson(args);
    return this.calls.some((c) => c.tool === tool && (c.args === undefined || canonicalJson(c.args) === key));
  }

  /** What a call the record has no answer for, and that may not run, is told. */
  missing(tool: string): string {
    return this.kind === "script"
      ? `Not scripted: this eval case gives no result for ${tool}, and ${tool} is not named live, so it did not run.`
      : `Not in the record: ${tool} was not called with these arguments in the recorded conversation, and it is not named live, so it did not run (this is a replay).`;
  }
}

export interface RecordedToolsetOptions {
  /** The real toolset of the namespace, if the daemon has one: its tools are offered, and `live` ones run through it. */
  real?: Toolset | undefined;
  /** Patterns (`workers/find_order`, `files/*`) of the tools that may really run when the record has no answer. */
  live: readonly string[];
  /** Told how each call was answered, by its call ID. */
  onServed(callId: string, served: ServedCall): void;
}

/** One namespace of a replay's tools, answered from the record. */
export class RecordedToolset implements Toolset {
  readonly kind: ToolsetKind;
  private readonly isLive: (name: string) => boolean;

  constructor(
    readonly namespace: string,
    private readonly record: CallRecord,
    private readonly options: RecordedToolsetOptions,
  ) {
    this.kind = options.real?.kind ?? "other";
    const live = options.live.map(compileToolPattern);
    this.isLive = (name) => live.some((m) => m(name));
  }

  /** The real toolset's tools (listing runs nothing), and tools only the record knows with a schema that takes any object. */
  async list(scope: ToolScope): Promise<ToolInfo[]> {
    let tools: ToolInfo[] = [];
    try {
      tools = this.options.real ? [...(await this.options.real.list(scope))] : [];
    } catch {
      tools = [];
    }
    const known = new Set(tools.map((t) => t.name));
    for (const c of this.record.calls) {
      if (known.has(c.tool) || !c.tool.startsWith(this.namespace + "/")) continue;
      known.add(c.tool);
      tools.push({
        name: c.tool,
        description: `${c.tool} (known from the record; its source is not connected now)`,
        inputSchema: { type: "object", additionalProperties: true },
        readOnly: c.readOnly ?? false,
        idempotent: c.idempotent ?? false,
      });
    }
    return tools;
  }

  async call(tool: string, args: unknown, ctx: ToolCallContext): Promise<ToolOutcome> {
    const name = `${this.namespace}/${tool}`;
    const recorded = this.record.take(name, args);
    if (recorded) {
      this.options.onServed(ctx.callId, { source: this.record.kind === "script" ? "scripted" : "record", matched: true });
      return recorded.outcome;
    }
    const real = this.options.real;
    if (real && this.isLive(name)) {
      this.options.onServed(ctx.callId, { source: "live", matched: false });
      return real.call(tool, args, ctx);
    }
    this.options.onServed(ctx.callId, { source: "missing", matched: false });
    return { ok: false, kind: "failed", error: this.record.missing(name) };
  }
}
