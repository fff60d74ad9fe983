import type { Command } from "commander";
import type { AgentDetail, TriggerView } from "@wardrik/protocol";
import { agentNamed } from "../connect-on-demand.js";
import { formatArgs } from "../format-args.js";
import { examples, json, out } from "../output.js";

export function registerAgent(program: Command): void {
  const agent = examples(
    program.command("agent").description("inspect and control one agent"),
    "wardrik agent show triage",
    "wardrik agent cancel triage",
  );
  examples(
    agent
      .command("show")
      .argument("<name>", "agent name, or org/name")
      .option("--json", "print JSON")
      .description("an agent's details: definition, status, spend, waiting calls with their arguments, tool warnings"),
    "wardrik agent show triage",
    "wardrik agent show acme/triage --json",
  ).action(async (name: string, opts: { json?: boolean }) => {
    const { agent: a, client, ref } = await agentNamed(name);
    const d = await client.getAgent(a.id);
    if (opts.json) return json(d);
    printAgent(d, ref);
  });
  examples(
    agent
      .command("cancel")
      .argument("<name>", "agent name, or org/name")
      .option("--conversation <id>", "only this conversation")
      .option("--json", "print JSON")
      .description("stop the running turn and drop queued messages"),
    "wardrik agent cancel triage",
    "wardrik agent cancel triage --conversation C1",
  ).action(async (name: string, opts: { conversation?: string; json?: boolean }) => {
    const { agent: a, client } = await agentNamed(name);
    const r = await client.cancel(a.id, opts.conversation);
    if (opts.json) return json(r);
    out(`Cancelled ${r.cancelled.length} turn(s), dropped ${r.dropped} queued message(s).`);
  });
  examples(
    agent
      .command("kill")
      .argument("<name>", "agent name, or org/name")
      .argument("<call>", "the call ID (call_...)")
      .option("--json", "print JSON")
      .description("stop one tool call; the model is told and the turn goes on"),
    "wardrik agent kill triage call_01JF8X5RQ2M3V9ZK0B7Y4T6WHN",
  ).action(async (name: string, call: string, opts: { json?: boolean }) => {
    const { agent: a, client } = await agentNamed(name);
    const r = await client.decide(a.id, call, "kill");
    if (opts.json) return json(r);
    out(`Stopping ${r.call} (${r.tool}).`);
  });
  examples(
    agent
      .command("clear")
      .argument("<name>", "agent name, or org/name")
      .option("--conversation <id>", "only this conversation")
      .option("--json", "print JSON")
      .description("empty the history (the event record stays)"),
    "wardrik agent clear triage",
    "wardrik agent clear triage --conversation C1",
  ).action(async (name: string, opts: { conversation?: string; json?: boolean }) => {
    const { agent: a, client } = await agentNamed(name);
    const r = await client.clear(a.id, opts.conversation);
    if (opts.json) return json(r);
    out(`Cleared ${r.cleared.length ? r.cleared.join(", ") : "nothing (no conversations)"}.`);
  });
  examples(
    agent
      .command("rm")
      .argument("<name>", "agent name, or org/name")
      .option("--json", "print JSON")
      .description("remove an agent created through the HTTP API"),
    "wardrik agent rm reporter",
  ).action(async (name: string, opts: { json?: boolean }) => {
    const { agent: a, client, ref } = await agentNamed(name);
    await client.removeAgent(a.id);
    if (opts.json) return json({ removed: a.id, name: a.name, org: a.org });
    out(`Removed ${ref}.`);
  });
}

function printAgent(d: AgentDetail, ref: string): void {
  out(`${d.name} (${d.id})  ${d.status}`);
  if (d.reason) {
    const [first, ...more] = d.reason.split("\n");
    out(`  unreadable: ${first}`);
    for (const line of more) out(`              ${line}`);
  }
  out(`  ${d.description}`);
  if (d.file) out(`  file: ${d.file}`);
  const fallback = d.fallback_models?.length ? ` (then ${d.fallback_models.join(", ")})` : "";
  out(`  model: ${d.model ?? "(config default)"}${fallback}   policy: ${d.policy ?? "(default)"}`);
  out(`  tools: ${d.tools.join(", ") || "none"}`);
  if (d.agents?.length) out(`  agents: ${d.agents.join(", ")} (as agents/NAME; max_depth ${d.max_depth})`);
  for (const w of d.tool_warnings) out(`  warning: tool pattern ${w.pattern} matches nothing: ${w.reason}`);
  out(`  limits: max_iterations ${d.max_iterations}, timeout ${d.timeout} s, retries ${d.retries}, idle_timeout ${d.idle_timeout}`);
  const caps = [
    d.spend.per_turn_cap_usd !== undefined ? `$${d.spend.per_turn_cap_usd}/turn` : "",
    d.spend.per_day_cap_usd !== undefined ? `$${d.spend.per_day_cap_usd}/day` : "",
  ].filter(Boolean);
  out(
    `  spend today: $${d.spend.today_usd.toFixed(4)} (model $${d.spend.model_usd.toFixed(4)}, tools $${d.spend.tools_usd.toFixed(4)})${caps.length ? `; caps ${caps.join(", ")}` : ""}`,
  );
  for (const s of d.tool_sources) out(`  tool source ${s.name}: ${s.status}${s.reason ? ` (${s.reason})` : ""}`);
  if (d.conversations.length) out(`  conversations: ${d.conversations.map((c) => `${c.key} (${c.status})`).join(", ")}`);
  for (const t of d.triggers ?? []) out(`  trigger ${describeTrigger(t)}`);
  for (const c of d.edited_calls ?? []) {
    out(`  edited at approval: ${c.call} ${c.tool} (${c.status})`);
    out(`    ran with: ${formatArgs(c.args, "              ")}`);
    out(`    model asked for: ${formatArgs(c.original_args, "                     ")}`);
  }
  for (const c of d.waiting_calls) {
    out(`  waiting: ${c.call} ${c.tool}${c.reason ? ` — ${c.reason}` : ""}`);
    if (c.rule) out(`    rule:    ${c.rule}`);
    out(`    args:    ${formatArgs(c.args, "             ")}`);
    out(`    approve: wardrik approve ${ref} ${c.call}`);
    out(`    deny:    wardrik deny ${ref} ${c.call} --reason "..."`);
  }
}

/** `schedule "0 9 * * 1-5" -> mornings; next 2026-01-05T09:00:00.000Z, last fired ...`. */
function describeTrigger(t: TriggerView): string {
  const what =
    t.kind === "schedule"
      ? `schedule "${t.schedule}"${t.timezone ? ` (${t.timezone})` : ""}`
      : t.kind === "webhook"
        ? `webhook ${t.webhook} (POST ${t.path})`
        : `event ${t.event?.agent ?? "any agent"}: ${t.event?.types?.join(", ") ?? "every type"}`;
  const when = [
    t.next_run ? `next ${t.next_run}` : "",
    t.last_fired ? `last fired ${t.last_fired}${t.last_message ? ` (${t.last_message})` : ""}` : "never fired",
  ].filter(Boolean);
  return `${what} -> ${t.conversation}; ${when.join(", ")}`;
}
