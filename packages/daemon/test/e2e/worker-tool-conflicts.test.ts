/**
 * One tool name, one definition per org: real worker processes (the SDK)
 * that register `lookup` identically share its calls; one that registers it
 * with another schema or other safety flags is refused, told why, and the
 * daemon logs it; `wardrik tools` shows which workers serve the tool; and
 * once the workers with the first definition are gone, a refused one serves it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentFile, createProject, short, waitFor, type TestProject } from "../helpers/spawn-daemon.js";
import { spawnWorker, type WorkerProcess } from "../workers/helpers.js";

const SCRIPT = `steps:
  - tool_calls:
      - tool: workers/lookup
        args: { id: "{{message}}" }
  - text: "{{result}}"
`;

interface Tools {
  tools: { name: string; title?: string; served_by?: string[] }[];
}

let p: TestProject;
const workers = new Map<string, WorkerProcess>();

function start(name: string, env: Record<string, string> = {}): WorkerProcess {
  const w = spawnWorker("variant-worker.ts", { WARDRIK_URL: p.url, WARDRIK_TOKEN: p.token, WORKER_NAME: name, ...env });
  workers.set(name, w);
  return w;
}

/**
 * The workers serving workers/lookup, as GET /v1/agents/{id}/tools lists them (names only): what
 * `wardrik tools --json` prints, asked of the API, as a CLI process per look cost a node start each time (the
 * CLI's table of it is checked below).
 */
async function servers(): Promise<string[]> {
  const t = await p.apiOk<Tools>("GET", `/v1/agents/${await p.agentId("finder")}/tools`);
  return (t.tools.find((x) => x.name === "workers/lookup")?.served_by ?? []).map((s) => s.split(" ")[0]!).sort();
}

async function waitForServers(expected: string[]): Promise<void> {
  await waitFor(
    async () => JSON.stringify(await servers()) === JSON.stringify(expected),
    `workers/lookup served by ${expected.join(", ")}`,
    30_000,
    200,
  );
}

beforeAll(async () => {
  p = await createProject({
    scripts: { finder: SCRIPT },
    files: { "agents/finder.md": agentFile({ description: "Looks records up", model: "finder", tools: ["workers/*"] }) },
  });
  start("w-a");
  await waitForServers(["w-a"]);
  start("w-b");
  await waitForServers(["w-a", "w-b"]);
});

afterAll(async () => {
  for (const w of workers.values()) await w.stop();
});

describe("one tool name, one definition", () => {
  it("workers that register the tool identically share its calls", async () => {
    const by = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const { end } = await p.send("finder", `rec_${i}`);
      expect(short(end.type), JSON.stringify(end.data)).toBe("turn.completed");
      by.add((JSON.parse(String(end.data.reply)) as { worker: string }).worker);
    }
    expect([...by].sort()).toEqual(["w-a", "w-b"]);
  });

  it("a worker with another schema is refused: the worker is told why, the daemon logs it, calls go on to the others", async () => {
    const c = start("w-c", { LOOKUP_INPUT: "key" });
    const told = await c.waitFor((e) => e.event === "warning" && String(e.message).includes('"lookup"'), 30_000);
    expect(told.message).toBe(
      'Wardrik: the daemon skipped tool "lookup": tool lookup is already served by worker w-a with another schema; stop that worker or give this tool another name (this worker serves it once no worker with the other definition is connected)',
    );
    // It still connects, and says it serves nothing.
    const connected = await c.waitFor((e) => e.event === "info" && String(e.message).includes("connected"));
    expect(connected.message).toMatch(/^Wardrik: worker w-c connected to ws:\/\/127\.0\.0\.1:\d+\/v1\/workers; serving no tools\.$/);
    await waitFor(() => p.daemonStderr().includes("worker tool refused"), "the daemon's log line", 10_000);
    const logged = p
      .daemonStderr()
      .split("\n")
      .find((l) => l.includes("worker tool refused"))!;
    expect(JSON.parse(logged)).toMatchObject({ level: "warn", name: "w-c", tool: "lookup", served_by: "w-a", differs: "schema" });

    expect(await servers()).toEqual(["w-a", "w-b"]);
    for (let i = 0; i < 4; i++) {
      const { end } = await p.send("finder", `after_${i}`);
      expect(short(end.type), JSON.stringify(end.data)).toBe("turn.completed");
      expect(String(end.data.reply)).not.toContain("Invalid arguments");
    }
  });

  it("a worker whose tool differs only in its safety flags is refused too", async () => {
    const d = start("w-d", { LOOKUP_READ_ONLY: "no" });
    const told = await d.waitFor((e) => e.event === "warning" && String(e.message).includes('"lookup"'), 30_000);
    expect(told.message).toContain("tool lookup is already served by worker w-a with other safety flags (readOnly, idempotent)");
    expect(await servers()).toEqual(["w-a", "w-b"]);
  });

  it("wardrik tools shows the title and the worker connections that serve each worker tool", async () => {
    const text = await p.cli(["tools", "finder"]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^NAME \(policies\)\s+TITLE\s+MODEL SEES\s+SOURCE\s+READ-ONLY\s+IDEMPOTENT\s+SERVED BY$/m);
    expect(text.stdout).toMatch(/^workers\/lookup\s+Look up\s+workers__lookup\s+worker\s+yes\s+no\s+w-a \(wkr_\w+\), w-b \(wkr_\w+\)$/m);
  });

  it("once the workers with the first definition are gone, a refused worker serves the tool, and says so", async () => {
    await workers.get("w-a")!.stop();
    await workers.get("w-b")!.stop();
    const c = workers.get("w-c")!;
    const now = await c.waitFor((e) => e.event === "info" && String(e.message).includes("now sends calls"), 30_000);
    expect(now.message).toBe("Wardrik: the daemon now sends calls of lookup to this worker.");
    await waitForServers(["w-c"]);
    // The other refused worker disagrees with w-c as well: it stays refused.
    const show = await p.cli(["agent", "show", "finder"]);
    expect(show.stdout).toMatch(
      /tool source worker w-d \(wkr_\w+\): connected \(serves no tools; refused, as another worker serves them otherwise: lookup\)/,
    );
  });
});
