import type { CaseResult } from "./run-suite.js";

/**
 * The results as JUnit XML, the report format CI systems read (GitHub
 * Actions test reporters, GitLab, Jenkins): one testsuite per suite file,
 * one testcase per case; a failed expectation is a <failure>, a case that
 * could not run (the daemon refused it) an <error>.
 */
export function junitXml(suite: { file: string; agent: string }, results: readonly CaseResult[]): string {
  const failures = results.filter((r) => !r.pass && r.error === undefined).length;
  const errors = results.filter((r) => r.error !== undefined).length;
  const time = seconds(results.reduce((n, r) => n + r.ms, 0));
  const counts = `tests="${results.length}" failures="${failures}" errors="${errors}" time="${time}"`;
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="wardrik eval" ${counts}>`,
    `  <testsuite name="${attr(suite.file)}" ${counts}>`,
    `    <properties><property name="agent" value="${attr(suite.agent)}"/></properties>`,
  ];
  for (const r of results) {
    const open = `    <testcase classname="${attr(suite.agent)}" name="${attr(r.name)}" time="${seconds(r.ms)}"`;
    if (r.error !== undefined) {
      lines.push(`${open}>`, `      <error message="${attr(firstLine(r.error))}">${text(r.error)}</error>`, "    </testcase>");
    } else if (!r.pass) {
      const body = r.failures.join("\n");
      lines.push(`${open}>`, `      <failure message="${attr(firstLine(body))}">${text(body)}</failure>`, "    </testcase>");
    } else {
      lines.push(`${open}/>`);
    }
  }
  lines.push("  </testsuite>", "</testsuites>", "");
  return lines.join("\n");
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

function firstLine(s: string): string {
  return s.split("\n")[0] ?? "";
}

/** XML 1.0 cannot carry most control characters at all, even escaped. */
function clean(s: string): string {
  return s.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, "\uFFFD");
}

function text(s: string): string {
  return clean(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function attr(s: string): string {
  return text(s).replace(/"/g, "&quot;").replace(/\n/g, "&#10;");
}
