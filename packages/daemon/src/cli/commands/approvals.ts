import type { Command } from "commander";
import { agentNamed } from "../connect-on-demand.js";
import { examples, json, out, UsageError } from "../output.js";

export function registerApprovals(program: Command): void {
  examples(
    program
      .command("approve")
      .argument("<name>", "agent name, or org/name")
      .argument("<call>", "the call ID (call_...), as wardrik ask or wardrik agent show prints it")
      .option("--args <json>", "run the call with these arguments instead (a JSON object, checked against the tool's schema)")
      .option("--json", "print JSON")
      .description("approve a call that waits for a person; it runs"),
    "wardrik approve triage call_01JF8X5RQ2M3V9ZK0B7Y4T6WHN",
    `wardrik approve shop call_01JF8X5RQ2M3V9ZK0B7Y4T6WHN --args '{"orderId": "ord_1234"}'`,
  ).action(async (name: string, call: string, opts: { args?: string; json?: boolean }) => {
    const args = opts.args === undefined ? undefined : parseArgsOption(opts.args);
    const { agent, client } = await agentNamed(name);
    const r = await client.decide(agent.id, call, "approve", undefined, args);
    if (opts.json) return json(r);
    out(`Approved ${r.call} (${r.tool})${args ? " with edited arguments" : ""}.`);
  });
  examples(
    program
      .command("deny")
      .argument("<name>", "agent name, or org/name")
      .argument("<call>", "the call ID (call_...)")
      .option("--reason <text>", "why; the model is told")
      .option("--json", "print JSON")
      .description("refuse a call that waits for a person; the model is told why"),
    'wardrik deny triage call_01JF8X5RQ2M3V9ZK0B7Y4T6WHN --reason "Not on a Friday"',
  ).action(async (name: string, call: string, opts: { reason?: string; json?: boolean }) => {
    const { agent, client } = await agentNamed(name);
    const r = await client.decide(agent.id, call, "deny", opts.reason);
    if (opts.json) return json(r);
    out(`Denied ${r.call} (${r.tool}).`);
  });
  registerAnswer(program);
}

function registerAnswer(program: Command): void {
  examples(
    program
      .command("answer")
      .argument("<name>", "agent name, or org/name")
      .argument("<call>", "the call ID (call_...) of the question, as wardrik ls and wardrik ask print it")
      .argument("<text>", "the answer; with choices, one of them")
      .option("--json", "print JSON")
      .description("answer a question an agent asked a person (person/ask); the turn goes on"),
    'wardrik answer triage call_01JF8X5RQ2M3V9ZK0B7Y4T6WHN "Roll back"',
  ).action(async (name: string, call: string, text: string, opts: { json?: boolean }) => {
    const { agent, client } = await agentNamed(name);
    const r = await client.answer(agent.id, call, text);
    if (opts.json) return json(r);
    out(`Answered ${r.call}.`);
  });
}

/** `--args`: a JSON object; anything else is a usage error that says where it went wrong. */
function parseArgsOption(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (e) {
    throw new UsageError(
      `--args is not valid JSON (${e instanceof Error ? e.message : String(e)}); write an object such as '{"orderId": "ord_1234"}'.`,
    );
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new UsageError(
      `--args must be a JSON object of the tool's arguments, such as '{"orderId": "ord_1234"}'; got ${JSON.stringify(value)}.`,
    );
  }
  return value as Record<string, unknown>;
}
