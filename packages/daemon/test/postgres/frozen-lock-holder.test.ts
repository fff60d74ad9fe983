/**
 * PostgreSQL only. `Db.exclusive` (the lock nodes take to register agents/
 * when they start together) is held by a transaction that speaks while its
 * holder works: a holder frozen (SIGSTOP) past the idle-in-transaction
 * timeout loses it, and another process takes it while the first is still
 * frozen; a holder that is merely slow keeps it however long it works.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresDb } from "../../src/store/postgres-db.js";
import { createTestDatabase } from "../helpers/test-database.js";

const REPO_ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
const HOLDER = fileURLToPath(new URL("./fixtures/lock-holder.ts", import.meta.url));
const IDLE_MS = 300;

let holder: ChildProcess | undefined;
const handles: PostgresDb[] = [];
afterEach(async () => {
  if (holder && holder.exitCode === null && holder.signalCode === null) {
    const exited = new Promise((r) => holder!.once("exit", r));
    holder.kill("SIGCONT");
    holder.kill("SIGKILL");
    await exited;
  }
  holder = undefined;
  for (const h of handles.splice(0)) await h.close();
});

function open(url: string): PostgresDb {
  const db = new PostgresDb(url, { idleInTransactionMs: IDLE_MS, log: () => undefined });
  handles.push(db);
  return db;
}

/** Starts the holder process and resolves once it holds `name`. */
async function startHolder(url: string, name: string): Promise<ChildProcess> {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, ["--conditions=wardrik-source", "--import", "tsx", HOLDER, url, name, String(IDLE_MS)], {
    cwd: REPO_ROOT,
    env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  holder = child;
  let err = "";
  child.stderr!.setEncoding("utf8").on("data", (c: string) => (err += c));
  await new Promise<void>((resolve, reject) => {
    let out = "";
    child.stdout!.setEncoding("utf8").on("data", (c: string) => {
      out += c;
      if (out.includes("held\n")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`the lock holder exited (${String(code)}) before holding the lock:\n${err}`)));
  });
  return child;
}

describe("a PostgreSQL exclusive lock and a frozen holder", () => {
  it("a holder frozen past idle_in_transaction loses the lock: another process takes it while the holder is still frozen", async () => {
    const { url } = await createTestDatabase();
    const child = await startHolder(url, "agents-sync:default");
    child.kill("SIGSTOP");
    const db = open(url);
    // Without a bound this waits until the holder thaws, which here is never: the test's own timeout fails it.
    expect(await db.exclusive("agents-sync:default", () => Promise.resolve("taken"))).toBe("taken");
    expect(child.exitCode).toBeNull();
    expect(child.signalCode).toBeNull();
  });

  it("a live holder that works longer than idle_in_transaction keeps the lock until it is done", async () => {
    const { url } = await createTestDatabase();
    const [a, b] = [open(url), open(url)];
    const trace: string[] = [];
    let entered!: () => void;
    const isHeld = new Promise<void>((r) => (entered = r));
    const first = a.exclusive("slow", async () => {
      trace.push("a in");
      entered();
      // Several times the timeout, busy with other sessions meanwhile, as a sync of many agents is.
      const until = Date.now() + 4 * IDLE_MS;
      while (Date.now() < until) await a.get("SELECT pg_sleep(0.05)");
      trace.push("a out");
    });
    await isHeld;
    const second = b.exclusive("slow", () => Promise.resolve(void trace.push("b in")));
    await Promise.all([first, second]);
    expect(trace).toEqual(["a in", "a out", "b in"]);
  });
});
