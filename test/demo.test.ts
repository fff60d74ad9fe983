/**
 * `npm run demo` (scripts/demo.mjs): a fresh `wardrik init` project answers
 * offline, its own worker (`npm run worker`) serves a tool call, a refund waits
 * for approval and runs once approved through the CLI; the closing "Next:"
 * line points at something that still exists.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { expect, test } from "vitest";
import { REPO_ROOT, assertBuilt, outsideEnv } from "./packaging/pack-helpers.js";

test("the demo shows a files answer, a worker tool call and an approval, then cleans up", { timeout: 180_000 }, async () => {
  assertBuilt();
  const child = spawn(process.execPath, [join(REPO_ROOT, "scripts", "demo.mjs")], {
    cwd: REPO_ROOT,
    env: outsideEnv(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
  child.stderr.setEncoding("utf8").on("data", (c: string) => (out += c));
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  expect(code, out).toBe(0);

  const project = /Created a Wardrik project in (\S+):/.exec(out)?.[1];
  expect(project, out).toBeDefined();
  expect(out).toContain('Reading it back: "What should I remember today?"');
  expect(out).toContain("$ npm run worker");
  expect(out).toMatch(/→ workers\/find_order \(call_\w+\)/);
  const approve = /\$ wardrik (approve helper call_\w+)/.exec(out)?.[1];
  expect(approve, out).toBeDefined();
  expect(out).toMatch(/Approved call_\w+ \(workers\/refund_order\)/);
  expect(out).toMatch(/Order ord_1234 is refunded: \{"refunded":"ord_1234"/);
  // The project was removed: no line after the demo may send the reader there.
  const next = out.split("\n").filter((l) => l.startsWith("Next:"));
  expect(next.length).toBeGreaterThan(0);
  for (const line of next) expect(line).not.toContain(project!);
});
