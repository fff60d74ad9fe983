/**
 * The fault project's agent: the fault worker's three tools (readOnly
 * `lookup`, idempotent `upsert`, unsafe `charge`), the scripted model that
 * asks, per message, for one round of them and then answers, the policy that
 * allows them, and the probe agent that shows which workers are connected.
 * No vitest here: the benchmarks use it too.
 */
export const AGENT = "faulty";
export const TOOLS = ["lookup", "upsert", "charge"] as const;
export type FaultTool = (typeof TOOLS)[number];
export const SAFE: Record<FaultTool, boolean> = { lookup: true, upsert: true, charge: false };

export interface TurnShape {
  /** Delay of the turn's first model call (the one that asks for the round). */
  model1Ms?: number;
  /** Delay of the second model call (after the round's results). */
  model2Ms?: number;
  /** How long each tool runs; a tool left out is not called. */
  toolMs?: Partial<Record<FaultTool, number>>;
  /** How long a repeat of the same call takes (see the worker). */
  rerunMs?: number;
  /** Tools whose first run lasts until the test releases it (FaultWorker.release), instead of their toolMs. */
  hold?: FaultTool[];
}

function scriptSteps(shape: TurnShape, indent: string): string[] {
  const toolMs = shape.toolMs ?? { lookup: 300, upsert: 300, charge: 300 };
  const calls = TOOLS.filter((t) => toolMs[t] !== undefined).map((t) => {
    const args: Record<string, unknown> = { tag: `{{message}}/${t}`, ms: toolMs[t] };
    if (shape.rerunMs !== undefined) args.rerun_ms = shape.rerunMs;
    if (shape.hold?.includes(t)) args.hold = true;
    return `${indent}    - { tool: "workers/${t}", args: ${JSON.stringify(args)} }`;
  });
  return [
    `${indent}- delay_ms: ${shape.model1Ms ?? 0}`,
    `${indent}  tool_calls:`,
    ...calls,
    `${indent}- delay_ms: ${shape.model2Ms ?? 0}`,
    `${indent}  text: "done {{message}}"`,
  ];
}

/**
 * The scripted model: per message, round 1 = the tools of its shape, then a
 * final answer "done <message>". Tags are `<message>/<tool>`. `byPrefix` gives
 * messages that start with a key (and then a "-") their own shape.
 */
export function faultScript(shape: TurnShape = {}, byPrefix: Record<string, TurnShape> = {}): string {
  const lines = ["description: fault injection - one round of worker calls, then an answer"];
  const prefixes = Object.entries(byPrefix);
  if (prefixes.length > 0) {
    lines.push("scenarios:");
    for (const [prefix, s] of prefixes) {
      lines.push(
        `  - match: ${JSON.stringify(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}-`)}`,
        "    steps:",
        ...scriptSteps(s, "      "),
      );
    }
  }
  lines.push("steps:", ...scriptSteps(shape, "  "), "");
  return lines.join("\n");
}

export const POLICY = `description: The fault-injection agent may use every worker tool without asking.
rules:
  - tool: workers/*
    decision: allow
`;

export function agentMarkdown(extra: Record<string, unknown> = {}): string {
  const fields: Record<string, unknown> = {
    description: "Fault injection: one round of worker calls per message.",
    model: AGENT,
    tools: ["workers/*"],
    policy: "faults",
    max_iterations: 5,
    ...extra,
  };
  return `---\n${Object.entries(fields)
    .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
    .join("\n")}\n---\nYou run fault-injection rounds.\n`;
}

/**
 * A probe agent with tools ["*"], never sent a message: GET /v1/agents/{id} lists
 * connected workers under tool_sources only for it (http/describe.ts matches the
 * source name `worker NAME (ID)` against the agent's patterns, which `workers/*`
 * never matches). waitForWorker reads it.
 */
export const PROBE_AGENT = `---\ndescription: Lists tool sources.\nmodel: ${AGENT}\ntools: ["*"]\n---\nNever runs.\n`;

/** The files of a fault project, relative to its directory (the script goes to scripts/, see faultScript). */
export function faultFiles(agentExtra: Record<string, unknown> = {}): Record<string, string> {
  return {
    [`agents/${AGENT}.md`]: agentMarkdown(agentExtra),
    "agents/probe.md": PROBE_AGENT,
    "policies/faults.yaml": POLICY,
  };
}
