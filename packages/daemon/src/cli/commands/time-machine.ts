import { existsSync, readFileSync } from "node:fs";
import type { Command } from "commander";
import type { ReplayBody } from "@wardrik/protocol";
import { agentNamed } from "../connect-on-demand.js";
import { collect, examples, json, out, UsageError } from "../output.js";

/** `wardrik fork` and `wardrik replay`: the record as a time machine. */
export function registerTimeMachine(program: Command): void {
  examples(
    program
      .command("fork")
      .argument("<name>", "agent name, or org/name")
      .option("--conversation <id>", "the conversation to fork", "main")
      .requiredOption("--at <seq>", "the event (seq, as wardrik events shows it) whose history the fork starts from", positiveInt("--at"))
      .option("--as <id>", "the new conversation's key (default: CONVERSATION@SEQ)")
      .option("--json", "print JSON")
      .description("start a new conversation whose history is another's as it stood at an event; the original is not changed"),
    "wardrik fork shop --conversation main --at 42",
    "wardrik fork shop --at 42 --as try-refund && wardrik ask shop 'refund it' --conversation try-refund",
  ).action(async (name: string, opts: { conversation: string; at: number; as?: string; json?: boolean }) => {
    const { agent, client, ref } = await agentNamed(name);
    const f = await client.fork(agent.id, opts.conversation, opts.at, opts.as);
    if (opts.json) return json(f);
    out(`Forked ${f.from} at event ${f.at_seq} as ${f.conversation}: ${f.messages} message(s) from ${f.turns} turn(s).`);
    if (f.open_run) out(`Turn ${f.open_run} was still running at event ${f.at_seq}; it is left out.`);
    out(`Continue it: wardrik ask ${ref} MESSAGE --conversation ${f.conversation}`);
  });

  examples(
    program
      .command("replay")
      .argument("<name>", "agent name, or org/name")
      .option("--conversation <id>", "the recorded conversation", "main")
      .option("--turns <range>", "which turns: N, N..M or N.. (numbered from 1); default all")
      .option("--model <model>", "a model instead of the agent's (a models: name or provider/model-id)")
      .option("--agent-file <path>", "an agent file to run instead of the agent's loaded definition")
      .option("--policy <policy>", "a policy of policies/ by name, or a policy file's path, instead of the agent's")
      .option("--live <tool>", "a tool (or pattern) that may really run when the record has no answer; repeatable", collect, [])
      .option("--json", "print JSON")
      .description("run recorded turns again with other settings in a scratch copy; tool results come from the record")
      .addHelpText(
        "after",
        `
Every tool call with the same tool and arguments as a recorded one gets the
recorded result; any other call is answered "not in the record" and does not
run, unless --live names its tool. Nothing is written to the agent's record.`,
      ),
    "wardrik replay shop --conversation main --model script/careful",
    "wardrik replay shop --turns 3..4 --agent-file agents/shop.md --policy strict --json",
  ).action(async (name: string, opts: ReplayOptions) => {
    const body: ReplayBody = {
      conversation: opts.conversation,
      ...(opts.turns !== undefined ? { turns: parseTurns(opts.turns) } : {}),
      ...(opts.model !== undefined ? { model: opts.model } : {}),
      ...(opts.agentFile !== undefined ? { agent_file: { file: opts.agentFile, text: readText(opts.agentFile, "--agent-file") } } : {}),
      ...policyOption(opts.policy),
      ...(opts.live.length > 0 ? { live: opts.live } : {}),
    };
    const { agent, client } = await agentNamed(name);
    const report = await client.replay(agent.id, body);
    if (opts.json) return json(report);
    const { formatReplay } = await import("../replay-report.js");
    out(formatReplay(report));
  });
}

interface ReplayOptions {
  conversation: string;
  turns?: string;
  model?: string;
  agentFile?: string;
  policy?: string;
  live: string[];
  json?: boolean;
}

/** `3`, `3..5`, `3..`: the turns to replay. */
export function parseTurns(range: string): { from: number; to?: number } {
  const m = /^(\d+)(?:(\.\.)(\d+)?)?$/.exec(range.trim());
  const from = m ? Number(m[1]) : 0;
  const to = m?.[3] !== undefined ? Number(m[3]) : m?.[2] ? undefined : from;
  if (!m || from < 1 || (to !== undefined && to < from)) {
    throw new UsageError(`--turns ${range}: write N, N..M or N.. with turn numbers from 1 (M not below N).`);
  }
  return to === undefined ? { from } : { from, to };
}

/** A policy file's path (sent as its text) or a policy's name. */
function policyOption(policy: string | undefined): Pick<ReplayBody, "policy" | "policy_file"> {
  if (policy === undefined) return {};
  if (/\.ya?ml$/.test(policy) || existsSync(policy)) return { policy_file: { file: policy, text: readText(policy, "--policy") } };
  return { policy };
}

function readText(path: string, option: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (e) {
    throw new UsageError(`${option} ${path}: cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}).`);
  }
}

function positiveInt(option: string): (v: string) => number {
  return (v) => {
    if (!/^\d+$/.test(v) || Number(v) < 1) throw new UsageError(`${option} ${v}: must be an event's seq, a whole number from 1.`);
    return Number(v);
  };
}
