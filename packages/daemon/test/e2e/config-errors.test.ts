/**
 * A bad config.yaml stops the daemon at start with an error that names the
 * file, the line and the key; a bad policy file does not stop it, but the
 * agents that use that policy are unreadable with the reason.
 */
import { describe, expect, it } from "vitest";
import { createProject } from "../helpers/spawn-daemon.js";

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
