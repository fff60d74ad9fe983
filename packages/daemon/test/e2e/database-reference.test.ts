/**
 * config.yaml's `database:` may take its URL (and so its password) from the
 * environment, on either database; it may not take a stored secret, since
 * secrets are kept in that very database.
 */
import { expect, it } from "vitest";
import { createProject } from "../helpers/spawn-daemon.js";

const DATABASE_LINE = /^database:[ \t]*(.+)$/m;

it("database: ${env:NAME} — the daemon opens the database the variable names, and answers", async () => {
  const p = await createProject({ start: false });
  const url = DATABASE_LINE.exec(p.read("config.yaml"))![1]!.trim();
  p.write("config.yaml", p.read("config.yaml").replace(DATABASE_LINE, "database: ${env:WARDRIK_TEST_DATABASE_URL}"));
  await expect(p.start()).rejects.toThrow(/exited with 1/);
  expect(p.daemonStderr()).toMatch(/WARDRIK_TEST_DATABASE_URL/);
  expect(p.daemonStderr()).not.toContain(url);

  const q = await createProject({ start: false, env: { WARDRIK_TEST_DATABASE_URL: url } });
  q.write("config.yaml", q.read("config.yaml").replace(DATABASE_LINE, "database: ${env:WARDRIK_TEST_DATABASE_URL}"));
  // The second project's own database line pointed elsewhere; it now takes the first project's from the variable.
  await q.start();
  const { end } = await q.send("helper", "hello");
  expect(end.type).toBe("dev.wardrik.turn.completed");
});

it("database: ${secret:NAME} is refused at start: secrets are stored in the database itself", async () => {
  const p = await createProject({ start: false });
  p.write("config.yaml", p.read("config.yaml").replace(DATABASE_LINE, "database: ${secret:DATABASE_URL}"));
  await expect(p.start()).rejects.toThrow(/exited with 1/);
  expect(p.daemonStderr()).toMatch(
    /database: cannot use \$\{secret:\.\.\.\}, since secrets are stored in the database; use \$\{env:\.\.\.\}/,
  );
});
