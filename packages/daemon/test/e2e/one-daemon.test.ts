/**
 * One daemon per SQLite database. A second `wardrik daemon` on the same
 * project refuses to start, exits non-zero and names the holder's pid and
 * address; once the holder dies, even by kill -9, a new daemon starts at once.
 */
import { expect, it } from "vitest";
import { createProject, freePort, spawnWardrik } from "../helpers/spawn-daemon.js";

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

it("the CLI, finding no daemon at its address, never races one that holds the database: it names it", async (ctx) => {
  const p = await createProject({ scope: ctx });
  const r = await p.cli(["secret", "set", "RACED"], { input: "v", env: { WARDRIK_URL: "http://127.0.0.1:9" } });
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(
    /No daemon answered, and the database cannot be opened: Another Wardrik daemon \(pid \d+ at http:\/\/127\.0\.0\.1:\d+/,
  );
  expect(JSON.parse((await p.cli(["secret", "ls", "--json"])).stdout)).toEqual({ secrets: [] });
});
