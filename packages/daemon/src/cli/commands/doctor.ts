import type { Command } from "commander";
import type { Check } from "../doctor.js";
import { examples, json, out, setExitCode } from "../output.js";

const MARK: Record<Check["level"], string> = { ok: "✓", warn: "!", fail: "✗" };

export function registerDoctor(program: Command): void {
  examples(
    program
      .command("doctor")
      .option("--json", "print JSON")
      .description(
        "check the project: config.yaml, agents, policies, scripts, model keys, the database, the daemon and its workers; say what to fix (exit 1 when something is wrong)",
      ),
    "wardrik doctor",
    "wardrik doctor --json",
  ).action(async (opts: { json?: boolean }) => {
    // Loaded here: the checks read the project with the daemon's own config and store modules.
    const { runDoctor } = await import("../doctor.js");
    const report = await runDoctor(process.cwd());
    const failed = report.checks.filter((c) => c.level === "fail").length;
    const warned = report.checks.filter((c) => c.level === "warn").length;
    setExitCode(failed > 0 ? 1 : 0);
    if (opts.json) return json({ ...report, ok: failed === 0 });
    if (report.dir) out(`Checking the project in ${report.dir}`);
    for (const c of report.checks) {
      const [first, ...rest] = c.detail.split("\n");
      out(`${MARK[c.level]} ${c.name}: ${first}`);
      for (const line of rest) out(`    ${line}`);
      if (c.fix) out(`    fix: ${c.fix}`);
    }
    if (failed === 0) out(`\nNothing to fix${warned ? ` (${warned} warning${warned === 1 ? "" : "s"})` : ""}.`);
    else out(`\n${failed} thing${failed === 1 ? "" : "s"} to fix${warned ? `, ${warned} warning${warned === 1 ? "" : "s"}` : ""}.`);
  });
}
