/**
 * A bad config.yaml stops the daemon at start with an error that names the
 * file, the line and the key; a bad policy file does not stop it, but the
 * agents that use that policy are unreadable with the reason. What else the
 * daemon says at start: outside a project, on a port in use, about agents it
 * cannot use; and a `${secret:NAME}` the CLI reads without a false warning.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentFile, createProject, freePort, runWardrik, spawnWardrik, type TestProject } from "../helpers/spawn-daemon.js";

describe("config errors at daemon start", () => {
  it("an unknown key in config.yaml: the daemon exits 1 naming config.yaml, the line and the key", async () => {
    const p = await createProject({
      start: false,
      config: (text) => text.replace(/^(models:\n {2}demo:\n {4}provider: script\n {4}model: demo\n)/m, "$1    colour: red\n"),
    });
    expect(p.read("config.yaml")).toMatch(/colour: red/);
    const line =
      p
        .read("config.yaml")
        .split("\n")
        .findIndex((l) => l.includes("colour")) + 1;
    await expect(p.start()).rejects.toThrow(/exited with 1/);
    expect(p.daemonStderr()).toContain(`config.yaml:${line}:`);
    expect(p.daemonStderr()).toMatch(/models\.demo\.colour/);
    expect(p.daemonStderr()).not.toMatch(/\n\s+at /); // a message, not a stack trace
  });

  it("a broken policy file: the daemon runs, and the agents using that policy are unreadable with the reason", async () => {
    const p = await createProject({ files: { "policies/default.yaml": "rules:\n  - tool: files/*\n    decision: maybe\n" } });
    const agents = (await p.apiOk<{ agents: { name: string; status: string; reason?: string }[] }>("GET", "/v1/agents")).agents;
    const helper = agents.find((a) => a.name === "helper")!;
    expect(helper.status).toBe("unreadable");
    expect(helper.reason).toMatch(/policy "default"/);
    expect(helper.reason).toMatch(/decision/);
  });
});

describe("what the daemon says at start", () => {
  const tmp = mkdtempSync(join(tmpdir(), "wardrik-e2e-start-"));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it("outside a project: that it needs one and how to make one, or which folder above is one (exit 1)", async () => {
    const nowhere = join(tmp, "nowhere");
    mkdirSync(nowhere);
    const r = await runWardrik(["daemon"], { cwd: nowhere });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${nowhere} is not one (it has no config.yaml). Make one with wardrik init DIR`);
    expect(r.stderr).not.toMatch(/database|directory does not exist/);

    const project = join(tmp, "proj");
    expect((await runWardrik(["init", project], { cwd: tmp })).code).toBe(0);
    const inside = join(project, "agents");
    const below = await runWardrik(["daemon"], { cwd: inside });
    expect(below.code).toBe(1);
    expect(below.stderr).toContain(`${inside} is not one, but ${project} is (cd ${project} first)`);
  });

  it("a port in use: names the address, says who holds it and what to do (exit 1)", async () => {
    const port = await freePort();
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(port, "127.0.0.1", resolve));
    try {
      const p = await createProject({ start: false });
      p.write("config.yaml", p.read("config.yaml").replace(/^listen:.*$/m, `listen: 127.0.0.1:${port}`));
      const daemon = spawnWardrik(["daemon"], { cwd: p.dir });
      const end = await daemon.done;
      expect(end.code).toBe(1);
      expect(end.stderr).toContain(
        `Cannot listen on 127.0.0.1:${port}: the port is in use (EADDRINUSE): another program listens there. Stop it, or set another port in config.yaml's listen:, or run wardrik daemon --port N`,
      );
    } finally {
      holder.close();
    }
  });
});

describe("agents the daemon cannot use, and secrets the CLI cannot read", () => {
  let p: TestProject;
  beforeAll(async () => {
    p = await createProject({
      start: false,
      // No API key anywhere: the daemon starts, and says which agent will fail.
      env: { OPENAI_API_KEY: undefined },
      config: (init) =>
        `${init}subscribers:\n  - url: http://127.0.0.1:9/hook\n    types: [agent.never_sent]\n    secret: \${secret:HOOK_SECRET}\n`,
      files: {
        "agents/broken.md": "---\ndescription: Two mistakes\nmodle: demo\nmax_iterations: 0\n---\nHi.\n",
        "agents/keyless.md": agentFile({ description: "Uses a real provider", model: "openai/gpt-4o-mini" }),
      },
    });
    const set = await p.cli(["secret", "set", "HOOK_SECRET"], { input: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" });
    expect(set.code, set.stderr).toBe(0);
    await p.start();
  });

  it("the start-up log names every unreadable agent with all its problems, and an agent whose model has no API key", () => {
    const lines = p
      .daemonStderr()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as { level: string; msg: string; agent?: string });
    const broken = lines.find((l) => l.agent === "broken");
    expect(broken).toMatchObject({ level: "warn" });
    expect(broken!.msg.split("\n")).toEqual([
      expect.stringMatching(/^agent broken is unreadable: agents\/broken\.md:3: key "modle" is not allowed: did you mean "model"\?/),
      "agents/broken.md:4: max_iterations must be a positive integer",
    ]);
    const keyless = lines.find((l) => l.agent === "keyless");
    expect(keyless).toMatchObject({
      level: "warn",
      msg: 'agent keyless cannot call its model: Model "openai/gpt-4o-mini" has no API key: set OPENAI_API_KEY, or add an entry with api_key under models: in config.yaml',
    });
  });

  it("a subscriber secret written ${secret:NAME}, as the README writes it, gives the CLI no warning", async () => {
    const ls = await p.cli(["ls"]);
    expect(ls.code).toBe(0);
    expect(ls.stderr).toBe("");
    const offline = await p.cli(["secret", "ls"]);
    expect(offline.stderr).toBe("");
  });
});
