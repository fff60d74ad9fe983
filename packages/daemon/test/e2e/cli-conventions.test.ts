/**
 * What every command of the CLI offers: --help with an example, --json on
 * every command that prints a result (each checked against the real daemon),
 * and shell completion scripts written from the program's own commands.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { CommanderError, type Command } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/main.js";
import { agentFile, createProject, runWardrik, type TestProject } from "../helpers/spawn-daemon.js";

const tmp = mkdtempSync(join(tmpdir(), "wardrik-e2e-conventions-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Every command as its words: ["agent", "show"], ["ls"], ... */
function commandPaths(cmd: Command, prefix: string[] = []): string[][] {
  return cmd.commands.flatMap((c) => {
    const path = [...prefix, c.name()];
    return c.commands.length > 0 ? [path, ...commandPaths(c, path)] : [path];
  });
}
const ALL = commandPaths(await buildProgram());
const leaves = (cmd: Command, prefix: string[] = []): { path: string[]; cmd: Command }[] =>
  cmd.commands.flatMap((c) => (c.commands.length > 0 ? leaves(c, [...prefix, c.name()]) : [{ path: [...prefix, c.name()], cmd: c }]));

/**
 * What `wardrik ...ARGS` prints, parsed in this process as bin/wardrik.js parses it (the program built for those
 * arguments, which loads only the modules they name): the text commander writes, and its exit code.
 */
async function inProcess(args: string[]): Promise<{ code: number; stdout: string }> {
  const argv = ["node", "wardrik", ...args];
  const program = await buildProgram(argv);
  let stdout = "";
  const capture = (cmd: Command): void => {
    cmd.configureOutput({ writeOut: (text) => void (stdout += text), writeErr: (text) => void (stdout += text) });
    cmd.commands.forEach(capture);
  };
  capture(program);
  try {
    await program.parseAsync(argv);
    return { code: 0, stdout };
  } catch (err) {
    // main.ts: help ends with 0, any other of commander's errors with 2 (the program exits through exceptions: exitOverride).
    if (!(err instanceof CommanderError)) throw err;
    return { code: err.code === "commander.helpDisplayed" || err.code === "commander.help" ? 0 : 2, stdout };
  }
}

describe("--help", () => {
  // Each command's help is read in this process (a process per command cost half a CPU-second each); the help of a
  // command and of a subcommand is also read from a real process below, so what main.ts does with it stays tested.
  it.each(ALL.map((p) => [p.join(" "), p]))("wardrik %s --help shows an example", async (_name, path) => {
    const r = await inProcess([...path, "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\nExamples?:\n {2}\S/);
  });

  it("in a process, wardrik --help and wardrik agent show --help print the same help, and exit 0", async () => {
    for (const args of [["--help"], ["agent", "show", "--help"]]) {
      const r = await runWardrik(args, { cwd: tmp });
      expect(r.code, args.join(" ")).toBe(0);
      expect(r.stdout).toBe((await inProcess(args)).stdout);
    }
  });
});

describe("--json", () => {
  it("every command that prints a result has --json (the daemon logs, mcp serve speaks MCP, a completion script is a script, a schema is JSON already)", async () => {
    const without = leaves(await buildProgram())
      .filter((l) => !l.cmd.options.some((o) => o.long === "--json"))
      .map((l) => l.path.join(" "));
    expect(without.sort()).toEqual(["completion", "daemon", "mcp serve", "schema"]);
  });

  let p: TestProject;
  beforeAll(async () => {
    p = await createProject({
      scripts: { asker: "steps:\n  - tool_calls: [{ tool: files/write, args: { path: a.md, content: x } }]\n  - text: done\n" },
      files: {
        "policies/careful.yaml": "description: Ask.\nrules:\n  - tool: files/write\n    decision: ask\n",
        "agents/parker.md": agentFile({ description: "Parks", model: "asker", tools: ["files"], policy: "careful" }),
        "agents/parker2.md": agentFile({ description: "Parks", model: "asker", tools: ["files"], policy: "careful" }),
      },
    });
  });

  /** Runs a command with --json: exit 0, and stdout is one JSON document. */
  const json = async (args: string[]) => {
    const r = await p.cli([...args, "--json"]);
    expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
    return JSON.parse(r.stdout) as unknown;
  };

  it("ls, reload, token, init", async () => {
    expect(await json(["ls"])).toEqual(expect.arrayContaining([expect.objectContaining({ name: "parker", status: "idle" })]));
    expect(await json(["reload"])).toEqual({
      warnings: [],
      added: [],
      updated: [],
      removed: [],
      unreadable: [],
      model_warnings: [],
      unreadable_reasons: [],
    });
    expect(await json(["token", "acme", "--name", "ci"])).toEqual({ org: "acme", name: "ci", token: expect.stringMatching(/^wdk_/) });
    const init = (await json(["init", join(tmp, "made")])) as { dir: string; files: string[] };
    expect(init.dir).toBe(join(tmp, "made"));
    expect(init.files).toContain("config.yaml");
  });

  it("agent kill, deny on waiting calls; agent rm of an API agent", async () => {
    for (const [agent, verb] of [
      ["parker", ["agent", "kill"]],
      ["parker2", ["deny"]],
    ] as const) {
      const id = await p.agentId(agent);
      await p.apiOk("POST", `/v1/agents/${id}/messages`, { text: "go" });
      const asked = await p.waitForEvent(id, (e) => e.type.endsWith("approval.requested"));
      const r = await json([...verb, agent, String(asked.data.call)]);
      expect(r).toEqual({ call: asked.data.call, status: expect.any(String), tool: "files/write" });
    }
    const made = await p.apiOk<{ id: string }>("POST", "/v1/agents", { name: "temp", description: "made through the API", model: "asker" });
    expect(await json(["agent", "rm", "temp"])).toEqual({ removed: made.id, name: "temp", org: "default" });
  });
});

describe("wardrik completion", () => {
  const exec = promisify(execFile);
  const script = async (shell: string) => (await runWardrik(["completion", shell], { cwd: tmp })).stdout;

  it("bash: the script completes commands, subcommands and options", async () => {
    const file = join(tmp, "wardrik.bash");
    writeFileSync(file, await script("bash"));
    const complete = async (...words: string[]) => {
      const { stdout } = await exec("bash", [
        "-c",
        `source ${JSON.stringify(file)}; COMP_WORDS=(${words.map((w) => JSON.stringify(w)).join(" ")}); COMP_CWORD=${words.length - 1}; _wardrik; printf '%s\\n' "\${COMPREPLY[@]}"`,
      ]);
      return stdout.trim().split("\n");
    };
    expect(await complete("wardrik", "")).toEqual(expect.arrayContaining(ALL.filter((p) => p.length === 1).map((p) => p[0])));
    expect(await complete("wardrik", "ag")).toEqual(["agent"]);
    expect(await complete("wardrik", "agent", "")).toEqual(["show", "cancel", "kill", "clear", "rm", "--help"]);
    expect(await complete("wardrik", "ask", "helper", "hi", "--")).toEqual([
      "--conversation",
      "--no-wait",
      "--json",
      "--retry-for",
      "--help",
    ]);
    expect(await complete("wardrik", "secret", "ls", "--j")).toEqual(["--json"]);
  });

  it("zsh and fish: every command and option is in the script", async () => {
    const zsh = await script("zsh");
    const fish = await script("fish");
    expect(zsh).toMatch(/^#compdef wardrik/);
    expect(zsh).toContain("compdef _wardrik wardrik");
    for (const path of ALL) {
      expect(zsh).toContain(`'${path.at(-1)}:`);
      expect(fish).toContain(`-a ${path.at(-1)} -d`);
    }
    expect(zsh).toContain("'--conversation:conversation to use'");
    expect(fish).toContain("complete -c wardrik -n '__fish_seen_subcommand_from ask' -l conversation -r -d 'conversation to use'");
    expect(fish).toContain("complete -c wardrik -n '__fish_seen_subcommand_from secret; and __fish_seen_subcommand_from ls' -l json");
  });

  it("an unknown shell is a usage error", async () => {
    const r = await runWardrik(["completion", "powershell"], { cwd: tmp });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown shell "powershell"; choose bash, zsh, fish/);
  });
});
