/**
 * The run's leftover-process check (test/no-leftover-processes.ts) fails a run
 * that leaves a process behind, and kills it; a process started by hand in the
 * checkout while the run goes on is not the run's, and is left alone.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";
import { waitFor } from "../packages/daemon/test/helpers/wait.js";

const require = createRequire(import.meta.url);
const VITEST = join(require.resolve("vitest/package.json"), "..", "vitest.mjs");
const FIXTURE = fileURLToPath(new URL("./fixtures/leaky-run/", import.meta.url));
const BY_HAND = "setInterval(() => {}, 1002)";

// forks: the test runs in a child process of the runner; threads: in the runner process itself (the `unit` project).
test.each(["forks", "threads"])(
  "a run whose tests leave processes running exits 1 and names them, which are then gone; a process started by hand meanwhile runs on (pool %s)",
  { timeout: 120_000 },
  async (pool) => {
    const dir = mkdtempSync(join(tmpdir(), "leftover-check-"));
    const started = join(dir, "started");
    const go = join(dir, "go");
    let byHand: number | undefined;
    try {
      const child = spawn(process.execPath, [VITEST, "run", "--config", join(FIXTURE, "vitest.config.ts"), `--pool=${pool}`], {
        cwd: FIXTURE,
        env: { ...process.env, NO_COLOR: "1", LEFTOVER_STARTED: started, LEFTOVER_GO: go },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      child.stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
      child.stderr.setEncoding("utf8").on("data", (c: string) => (out += c));
      const closed = new Promise<number | null>((resolve) => child.once("close", resolve));
      await waitFor(() => existsSync(started), "the fixture run to start its last test", 60_000);
      // As from another shell: a job of its own (its own process group), its parent gone, no marker, its path naming the checkout.
      const env = { ...process.env };
      delete env.WARDRIK_TEST_RUN;
      spawn("sh", ["-c", `"${process.execPath}" -e "${BY_HAND}" "${join(FIXTURE, "by-hand")}" &`], {
        env,
        stdio: "ignore",
        detached: true,
      });
      await waitFor(() => (byHand = findProcess(BY_HAND)) !== undefined, "the process started by hand", 20_000);
      writeFileSync(go, "");
      const code = await closed;
      expect(code, out).toBe(1);
      expect(out).toMatch(/The tests left 2 process\(es\) running \(now killed\)/);
      for (const code of ["1000", "1001"]) {
        const pid = Number(new RegExp(`pid (\\d+): .*setInterval\\(\\(\\) => \\{\\}, ${code}\\)`).exec(out)?.[1]);
        expect(pid, out).toBeGreaterThan(0);
        expect(running(pid)).toBe(false);
      }
      expect(out).not.toContain(BY_HAND);
      expect(running(byHand!)).toBe(true);
    } finally {
      if (byHand !== undefined && running(byHand)) process.kill(byHand, "SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
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

/**
 * The pid of a running `node -e text` process. Not merely a command line that
 * holds `text`: the short-lived `sh -c "node -e text &"` that starts it holds
 * it too, and taking that one's pid made this test fail now and then.
 */
function findProcess(text: string): number | undefined {
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
      if (argv[0] === process.execPath && argv[1] === "-e" && argv[2] === text && running(Number(name))) return Number(name);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}
