/**
 * PostgreSQL only (a table lock stops the daemon at the point under test).
 * A message POST with an Idempotency-Key whose daemon was killed after it
 * claimed the key and before the message committed: the retry, to the
 * restarted daemon, queues the message (202), once; it is not refused as of
 * unknown outcome.
 */
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createProject, waitFor, type TestProject } from "../helpers/spawn-daemon.js";

let p: TestProject;
let agent: string;
let blocker: pg.Client;

beforeAll(async () => {
  p = await createProject({
    scripts: { quiet: "steps:\n  - text: quiet reply\n" },
    files: { "agents/quiet.md": "---\ndescription: Answers without tools.\nmodel: quiet\n---\nBe quiet.\n" },
  });
  agent = await p.agentId("quiet");
  blocker = new pg.Client({ connectionString: /^database:\s*(\S+)/m.exec(p.read("config.yaml"))![1] });
  await blocker.connect();
}, 120_000);

afterAll(async () => {
  await blocker?.end().catch(() => undefined);
});

const post = (key: string) =>
  fetch(`${p.url}/v1/agents/${agent}/messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${p.token}`, "content-type": "application/json", "idempotency-key": key },
    body: JSON.stringify({ text: "only once" }),
  });

it("a retry of a message whose first attempt died before it was stored queues it, once", { timeout: 120_000 }, async () => {
  // Queuing writes to inputs: hold a lock that lets the daemon read it, not write it.
  await blocker.query("BEGIN");
  await blocker.query("LOCK TABLE inputs IN SHARE ROW EXCLUSIVE MODE");
  const first = post("retry-key-1").catch(() => undefined);
  // The daemon has claimed the key (its own commit) and now waits for the lock.
  await waitFor(
    async () =>
      (await blocker.query("SELECT 1 FROM pg_locks WHERE NOT granted AND relation = 'inputs'::regclass AND pid <> pg_backend_pid()"))
        .rowCount! > 0,
    "the daemon's message transaction to wait for the lock",
    30_000,
  );
  await p.kill();
  await blocker.query("ROLLBACK");
  await first;
  await p.start();

  const retried = await post("retry-key-1");
  expect(retried.status, await retried.clone().text()).toBe(202);
  const { message } = (await retried.json()) as { message: string };
  const again = await post("retry-key-1");
  expect(again.headers.get("idempotent-replayed")).toBe("true");
  expect(((await again.json()) as { message: string }).message).toBe(message);

  await p.waitForEvent(agent, (e) => e.type === "dev.wardrik.turn.completed");
  const queued = (await p.events(agent)).filter((e) => e.type === "dev.wardrik.message.queued");
  expect(queued.map((e) => e.data.message)).toEqual([message]);
});
