import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Command } from "commander";
import { agentNamed } from "../connect-on-demand.js";
import { findProjectDir } from "../project-dir.js";
import { collect, examples, json, out, setExitCode, UsageError } from "../output.js";

interface EvalOptions {
  json?: boolean;
  junit?: string;
  live: string[];
}

/** `wardrik eval SUITE.yaml`: cases replayed against the current agent file; exit 1 when one fails. */
export function registerEval(program: Command): void {
  examples(
    program
      .command("eval")
      .argument("<suite>", "the suite file (YAML): agent, and cases with what each expects")
      .option("--json", "print JSON")
      .option("--junit <file>", "also write the results to FILE as JUnit XML (for CI)")
      .option("--live <tool>", "a tool (or pattern) that may really run when the record or script has no answer; repeatable", collect, [])
      .description(
        "run an eval suite against the agent's current file; tools answer from the record or the case's script; exit 1 when a case fails",
      )
      .addHelpText(
        "after",
        `
A case is a new message (message:, with scripted tool results in tools:) or a
recorded turn (from: { conversation, turn }). It runs like wardrik replay, with
agents/NAME.md as it is on disk now, and is checked against expect: reply
(text it contains, or /pattern/), calls (tool and a JSON subset of its
arguments), not_called, judge (criteria a judge model checks), max_cost_usd,
max_iterations, status. Exit status: 0 every case passed, 1 one failed, 2 the
suite file is not valid.`,
      ),
    "wardrik eval evals/shop.yaml",
    "wardrik eval evals/shop.yaml --junit reports/eval.xml",
  ).action(async (suitePath: string, opts: EvalOptions) => {
    const [{ readSuite }, { ConfigError }] = await Promise.all([import("../eval/suite-file.js"), import("../../config/yaml-source.js")]);
    let suite;
    try {
      suite = readSuite(suitePath);
    } catch (e) {
      if (ConfigError.isInstance(e)) throw new UsageError(e.message);
      throw e;
    }
    const { agent, client } = await agentNamed(suite.agent);
    const agentFile = currentAgentFile(suitePath, suite.agent);
    const { runSuite } = await import("../eval/run-suite.js");
    const results = await runSuite(suite, {
      client,
      agentId: agent.id,
      ...(agentFile ? { agentFile } : {}),
      live: [...(suite.live ?? []), ...opts.live],
    });
    if (opts.junit) {
      const { junitXml } = await import("../eval/junit.js");
      writeFileSync(opts.junit, junitXml({ file: suitePath, agent: suite.agent }, results));
    }
    const failed = results.filter((r) => !r.pass).length;
    setExitCode(failed > 0 ? 1 : 0);
    if (opts.json) {
      return json({
        suite: suitePath,
        agent: suite.agent,
        agent_file: agentFile?.file ?? null,
        passed: results.length - failed,
        failed,
        cases: results,
      });
    }
    const { formatResults } = await import("../eval/results-table.js");
    out(formatResults(results, agentFile?.file));
  });
}

/**
 * The agent's file as it is on disk now (`agents/NAME.md` of the project the
 * suite or the working directory is in), so a case runs an edit before it
 * is reloaded; undefined runs the daemon's loaded definition.
 */
function currentAgentFile(suitePath: string, agent: string): { file: string; text: string } | undefined {
  if (agent.includes("/")) return undefined;
  const project = findProjectDir(dirname(resolve(suitePath))) ?? findProjectDir(process.cwd());
  const path = project && join(project, "agents", `${agent}.md`);
  if (!path || !existsSync(path)) return undefined;
  return { file: `agents/${agent}.md`, text: readFileSync(path, "utf8") };
}
