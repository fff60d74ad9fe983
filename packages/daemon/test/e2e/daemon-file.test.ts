/**
 * `.wardrik/daemon.json`: the running daemon says where it listens, so the
 * CLI finds a daemon started with `--port N` without WARDRIK_URL; it says so
 * when that address is not config.yaml's (or WARDRIK_URL points elsewhere);
 * a clean stop removes the file, and one left by a killed daemon is ignored
 * (and when another daemon answers in its place, the CLI says so).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { createProject, freePort, type TestProject } from "../helpers/spawn-daemon.js";

let p: TestProject;
/** config.yaml's address: a port nothing listens on (the daemon runs with --port 0). */
let configured = "";
const file = () => join(p.dir, ".wardrik", "daemon.json");
/** The CLI as a person runs it: no WARDRIK_URL (the harness gives one in --port 0 mode). */
const cli = (args: string[], env: Record<string, string | undefined> = {}) => p.cli(args, { env: { WARDRIK_URL: undefined, ...env } });

beforeAll(async () => {
  // `wardrik daemon --port 0`; config.yaml names another port, which the CLI reads.
  p = await createProject({ port: "zero" });
  const port = await freePort();
  p.write("config.yaml", `${p.read("config.yaml")}listen: 127.0.0.1:${port}\n`);
  configured = `http://127.0.0.1:${port}`;
});

describe(".wardrik/daemon.json", () => {
  it("the running daemon writes its URL and pid there", () => {
    const written = JSON.parse(readFileSync(file(), "utf8")) as { url: string; pid: number; version: string };
    expect(written).toMatchObject({ url: p.url, pid: p.child!.pid, version: expect.any(String) });
  });

  it("the CLI finds a daemon started with --port through it, and says the address is not config.yaml's", async () => {
    const r = await cli(["ls"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^helper\s+idle/m);
    expect(r.stderr).toBe(
      `note: this project's daemon runs at ${p.url} (.wardrik/daemon.json), not at config.yaml's ${configured}; using ${p.url}.\n`,
    );
  });

  it("WARDRIK_URL wins; the CLI says when it is not where this project's daemon runs", async () => {
    const other = p.url.replace("127.0.0.1", "localhost");
    const r = await cli(["ls"], { WARDRIK_URL: other });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe(
      `note: WARDRIK_URL is ${other}, but this project's daemon runs at ${p.url} (.wardrik/daemon.json); using WARDRIK_URL.\n`,
    );
    const same = await cli(["ls"], { WARDRIK_URL: p.url });
    expect(same.stderr).toBe("");
  });

  it("a clean stop removes it", async () => {
    await p.stop();
    expect(existsSync(file())).toBe(false);
    await p.start();
    expect(existsSync(file())).toBe(true);
  });

  it("one left by a daemon that was killed is ignored: the CLI goes to config.yaml's address, without a note", async () => {
    await p.kill();
    expect(existsSync(file()), "a killed daemon cannot remove it").toBe(true);
    const r = await cli(["ls"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^wardrik: Cannot reach the Wardrik daemon at ${configured}: `));
    expect(r.stderr).not.toContain("note:");
  });

  it("when another daemon answers at config.yaml's address and refuses the admin token, the CLI says this project's daemon is not running", async () => {
    const other = await createProject();
    p.write("config.yaml", p.read("config.yaml").replace(/^listen: .*$/m, `listen: 127.0.0.1:${other.port}`));
    const r = await cli(["ls"]);
    expect(r.code).toBe(1);
    expect(r.stderr).not.toContain("The bearer token is not valid");
    expect(r.stderr).toContain(`The daemon at http://127.0.0.1:${other.port} does not accept this project's admin token`);
    expect(r.stderr).toContain("This project's daemon is not running");
    expect(r.stderr).toContain(`another Wardrik daemon answers at http://127.0.0.1:${other.port}`);
    expect(r.stderr).toContain(`Start this project's daemon with \`wardrik daemon\` in ${p.dir}`);
    // With WARDRIK_TOKEN the token is the user's own choice: the daemon's answer stands.
    const own = await cli(["ls"], { WARDRIK_TOKEN: "wrk_not_a_token" });
    expect(own.stderr).toContain("The bearer token is not valid");
  });
});
