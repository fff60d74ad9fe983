import type { CaseResult } from "./run-suite.js";

/** The results as a table: one row per case (its failures below it), then the count. */
export function formatResults(results: readonly CaseResult[], agentFile: string | undefined): string {
  const rows = [
    ["CASE", "TURN", "RESULT", "COST"],
    ...results.map((r) => [r.name, r.turn, r.pass ? "pass" : r.error ? "ERROR" : "FAIL", `$${r.cost_usd.toFixed(6)}`]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const lines: string[] = [];
  for (const [i, row] of rows.entries()) {
    lines.push(row.map((cell, j) => (j === row.length - 1 ? cell : cell.padEnd(widths[j]!))).join("  "));
    const r = i > 0 ? results[i - 1]! : undefined;
    if (r && !r.pass) for (const f of r.failures) lines.push(`    ${f}`);
  }
  const failed = results.filter((r) => !r.pass).length;
  lines.push(
    "",
    `${results.length - failed} of ${results.length} case(s) passed${failed > 0 ? `, ${failed} failed` : ""} (agent file: ${agentFile ?? "the daemon's loaded definition"}).`,
  );
  return lines.join("\n");
}
