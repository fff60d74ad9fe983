import type { Command } from "commander";
import { connected } from "../connect-on-demand.js";
import { examples, json, out, UsageError } from "../output.js";

/** One line per agent: the first problem of a file, and how many more `agent show` lists. */
function firstProblem(reason: string | undefined): string {
  const [first = "", ...more] = (reason ?? "").split("\n");
  return more.length === 0 ? first : `${first} (and ${more.length} more: wardrik agent show)`;
}

/** A waiting question as ls shows it: the question, its choices, and how to answer. */
function asked(name: string, q: { call: string; question: string; choices?: string[] | undefined }): string {
  const choices = q.choices ? ` [${q.choices.join(" | ")}]` : "";
  return `${q.question.replace(/\s+/g, " ").slice(0, 120)}${choices} (wardrik answer ${name} ${q.call} TEXT)`;
}

export function registerLs(program: Command): void {
  examples(
    program
      .command("ls")
      .argument("[filter]", "attention: only parked and unreadable agents")
      .option("--json", "print JSON")
      .description("list agents and their status (idle, running, parked, queued, asleep, unreadable)"),
    "wardrik ls",
    "wardrik ls attention --json",
  ).action(async (filter: string | undefined, opts: { json?: boolean }) => {
    if (filter !== undefined && filter !== "attention") throw new UsageError(`unknown filter "${filter}"; the only filter is attention`);
    let agents = await (await connected()).listAgents();
    if (filter === "attention") agents = agents.filter((a) => a.status === "parked" || a.status === "unreadable");
    if (opts.json) return json(agents);
    if (agents.length === 0) return out(filter ? "Nothing needs attention." : "No agents.");
    const w = Math.max(4, ...agents.map((a) => a.name.length));
    const statusOf = (a: (typeof agents)[number]) => (a.question ? "parked (waiting for an answer)" : a.status);
    const sw = Math.max(10, ...agents.map((a) => statusOf(a).length));
    out(`${"NAME".padEnd(w)}  ${"STATUS".padEnd(sw)}  DESCRIPTION`);
    for (const a of agents) {
      out(
        `${a.name.padEnd(w)}  ${statusOf(a).padEnd(sw)}  ${a.status === "unreadable" ? firstProblem(a.reason) : a.question ? asked(a.name, a.question) : a.description}`,
      );
    }
  });
}
