/**
 * One daemon per SQLite database. A second `wardrik daemon` on the same
 * project refuses to start, exits non-zero and names the holder's pid and
 * address; once the holder dies, even by kill -9, a new daemon starts at once.
 */
import { expect, it } from "vitest";
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
  expect(JSON.parse((await p.cli(["secret", "ls", "--json"])).stdout)).toEqual({ secrets: [] });
});
