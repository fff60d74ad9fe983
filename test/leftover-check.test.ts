/** The run's leftover-process check (test/no-leftover-processes.ts) fails a run that leaves a process behind, and kills it. */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";

const require = createRequire(import.meta.url);
const VITEST = join(require.resolve("vitest/package.json"), "..", "vitest.mjs");
const FIXTURE = fileURLToPath(new URL("./fixtures/leaky-run/", import.meta.url));

// forks: the test runs in a child process of the runner; threads: in the runner process itself (the `unit` project).
test.each(["forks", "threads"])(
  "a run whose test leaves a process running exits 1 and names the process, which is then gone (pool %s)",
  async (pool) => {
    const child = spawn(process.execPath, [VITEST, "run", "--config", join(FIXTURE, "vitest.config.ts"), `--pool=${pool}`], {
      cwd: FIXTURE,
      env: { ...process.env, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => (out += c));
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    expect(code, out).toBe(1);
    expect(out).toMatch(/The tests left 1 process\(es\) running \(now killed\)/);
    const pid = Number(/pid (\d+): .*setInterval/.exec(out)?.[1]);
    expect(pid).toBeGreaterThan(0);
    expect(running(pid)).toBe(false);
  },
);

/** Alive and not a zombie waiting to be reaped. */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] !== "Z";
  } catch {
    return false;
  }
}
