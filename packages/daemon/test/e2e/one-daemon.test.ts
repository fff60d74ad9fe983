/**
 * One daemon per SQLite database. A second `wardrik daemon` on the same
 * project, or on a symlink to its database, refuses to start, exits non-zero
 * and names the holder's pid and address; once the holder dies, even by
 * kill -9, a new daemon starts at once. A daemon whose lease another daemon
 * took answers 503 with Retry-After and that daemon's address, never 500.
 */
import { cpSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { expect, it } from "vitest";
import { projectDatabaseUrl } from "../helpers/database-contents.js";
import { sideConnection } from "../helpers/side-connection.js";
import { agentFile, createProject, freePort, spawnWardrik } from "../helpers/spawn-daemon.js";

it("a second daemon on the same database refuses, naming the first; after kill -9 a new one starts", async (ctx) => {
  const p = await createProject({ scope: ctx });
  const before = await p.send("helper", "first");
  const port = await freePort();
  const second = spawnWardrik(["daemon", "--port", String(port)], { cwd: p.dir, scope: ctx });
  const result = await second.done;
  expect(result.code).not.toBe(0);
  const said = result.stderr;
  expect(said).toContain(`pid ${p.child!.pid}`);
  expect(said).toContain(p.url);
  expect(said).toMatch(/Another Wardrik daemon/);
  // The first daemon was not disturbed: its turn and its record are whole.
  const again = await p.send("helper", "still mine");
  expect(again.end.type).toBe("dev.wardrik.turn.completed");
  expect((await p.events("helper")).filter((e) => e.run === before.run && e.type.endsWith("turn.completed"))).toHaveLength(1);

  await p.kill();
  const started = Date.now();
  await p.start();
  expect(Date.now() - started).toBeLessThan(10_000);
  expect((await p.send("helper", "after the crash")).end.type).toBe("dev.wardrik.turn.completed");
});

it("a second daemon refuses while the first has a turn open, and re-runs none of it", async (ctx) => {
  const p = await createProject({
    scope: ctx,
    scripts: {
      noter: 'steps:\n  - tool_calls: [{ tool: "files/write", args: { path: "n.md", content: "{{message}}" } }]\n  - text: "noted"\n',
    },
    files: {
      "agents/noter.md": agentFile({ description: "Writes notes", model: "noter", tools: ["files"], policy: "careful" }),
      "policies/careful.yaml": "description: Writes need a person.\nrules:\n  - tool: files/write\n    decision: ask\n",
    },
  });
  const id = await p.agentId("noter");
  await p.apiOk("POST", `/v1/agents/${id}/messages`, { text: "open turn" });
  const asked = await p.waitForEvent(id, (e) => e.type.endsWith("approval.requested"));
  const before = await p.events(id);

  const second = spawnWardrik(["daemon", "--port", String(await freePort())], { cwd: p.dir, scope: ctx });
  const result = await second.done;
  expect(result.code).not.toBe(0);
  expect(result.stderr).toContain(`pid ${p.child!.pid}`);
  // The open turn was not recovered, re-run or failed by the second daemon: not one event more.
  expect(await p.events(id)).toEqual(before);

  const approved = await p.cli(["approve", "noter", String(asked.data.call)]);
  expect(approved.code, approved.stderr).toBe(0);
  const end = await p.waitForTurnEnd(id, asked.run!);
  expect(end.type).toBe("dev.wardrik.turn.completed");
  const events = await p.events(id);
  expect(events.filter((e) => e.type.endsWith("turn.started"))).toHaveLength(1);
  expect(events.filter((e) => e.type.endsWith("call.completed"))).toHaveLength(1);
});

it("the CLI, finding no daemon at its address, never races one that holds the database: it names it", async (ctx) => {
  const p = await createProject({ scope: ctx });
  const r = await p.cli(["secret", "set", "RACED"], { input: "v", env: { WARDRIK_URL: "http://127.0.0.1:9" } });
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(
    /No daemon answered, and the database cannot be opened: Another Wardrik daemon \(pid \d+ at http:\/\/127\.0\.0\.1:\d+/,
  );
  expect(JSON.parse((await p.cli(["secret", "ls", "--json"])).stdout)).toEqual({ secrets: [], unreadable: [] });
});

it("a second daemon on a symlink to the database refuses too, naming the first", async (ctx) => {
  const p = await createProject({ scope: ctx });
  const before = await p.send("helper", "first");
  // Another project folder whose config.yaml names a symlink to the first one's database file.
  const other = join(mkdtempSync(join(tmpdir(), "wardrik-e2e-")), "other");
  cpSync(p.dir, other, { recursive: true, filter: (src) => !basename(src).startsWith("wardrik.db") });
  const link = join(other, "linked.db");
  symlinkSync(join(p.dir, ".wardrik", "wardrik.db"), link);
  const config = p.read("config.yaml").replace(/^(database|listen):.*$/gm, "");
  writeFileSync(join(other, "config.yaml"), `${config}\ndatabase: sqlite:${link}\n`);

  const second = spawnWardrik(["daemon", "--port", String(await freePort())], { cwd: other, scope: ctx });
  const listening = second
    .waitForOutput((out) => out.includes("listening on"))
    .then(
      () => true,
      () => false,
    );
  expect(await Promise.race([listening, second.done.then(() => false)]), "the second daemon started").toBe(false);
  const result = await second.done;
  expect(result.code, result.stderr).not.toBe(0);
  expect(result.stderr).toMatch(/Another Wardrik daemon/);
  expect(result.stderr).toContain(`pid ${p.child!.pid}`);
  expect(result.stderr).toContain(p.url);
  // The first one goes on undisturbed.
  expect((await p.send("helper", "still mine")).end.type).toBe("dev.wardrik.turn.completed");
  expect((await p.events("helper")).filter((e) => e.run === before.run && e.type.endsWith("turn.completed"))).toHaveLength(1);
});

it("a daemon whose lease another daemon took answers 503 with Retry-After and the owner's address, never 500", async (ctx) => {
  const p = await createProject({ scope: ctx });
  await p.send("helper", "first");
  const id = await p.agentId("helper");
  // What another daemon on the same file does when it takes the agent: its node beats, and its lease has a newer token.
  const owner = "http://127.0.0.1:7999";
  const side = await sideConnection(projectDatabaseUrl(p.dir, p.read("config.yaml")));
  ctx.onTestFinished(() => side.close());
  await side.run("INSERT INTO nodes (name, url, pid, host, started_at, heartbeat_at) VALUES (?, ?, ?, ?, ?, ?)", [
    "intruder:7999",
    owner,
    4242,
    "elsewhere",
    new Date().toISOString(),
    Date.now(),
  ]);
  await side.run("UPDATE agents SET owner_node = ?, lease_token = lease_token + 1, lease_expires = ? WHERE id = ?", [
    "intruder:7999",
    Date.now() + 3_600_000,
    id,
  ]);

  for (const text of ["after the takeover", "and again"]) {
    const r = await p.api<{ code: string; detail: string; retryable: boolean }>("POST", `/v1/agents/${id}/messages`, { text });
    expect(r.status, r.text).toBe(503);
    expect(r.headers.get("retry-after")).toMatch(/^[1-9]\d*$/);
    expect(r.json).toMatchObject({ code: "unavailable", retryable: true });
    expect(r.json.detail).toContain(owner);
  }
  // It did not take the agent back, and it still answers everything else.
  const [row] = await side.all<{ owner_node: string }>("SELECT owner_node FROM agents WHERE id = ?", [id]);
  expect(row!.owner_node).toBe("intruder:7999");
  expect((await p.api("GET", "/v1/agents")).status).toBe(200);
});
