/**
 * `wardrik schema config|agent|policy` through the real CLI, and the schema
 * files the build ships (with wardrik, and with @wardrik/protocol for
 * projects), which the comment `wardrik init` writes points at.
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { Ajv } from "ajv";
import { parse as parseYaml } from "yaml";
import { describe, expect, it } from "vitest";
import { createProject, REPO_ROOT } from "../helpers/spawn-daemon.js";

const ajv = new Ajv({ strict: false });

describe("wardrik schema", () => {
  it("prints a valid JSON Schema for each kind, which validates the project init wrote", async () => {
    const p = await createProject({ start: false });
    for (const [kind, file] of [
      ["config", "config.yaml"],
      ["policy", "policies/default.yaml"],
      ["agent", "agents/helper.md"],
    ] as const) {
      const r = await p.cli(["schema", kind]);
      expect(r.code).toBe(0);
      const schema = JSON.parse(r.stdout) as Record<string, unknown>;
      expect(ajv.validateSchema(schema)).toBe(true);
      const text = p.read(file);
      const doc: unknown = parseYaml(kind === "agent" ? /^---\n([\s\S]*?)\n---/.exec(text)![1]! : text);
      const validate = ajv.compile(schema);
      expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
      expect(validate({ ...(doc as object), colour: "red" })).toBe(false);
    }
  });

  it("the comment at the top of config.yaml and policies names, relative to the file, the same schema in the project's node_modules", async () => {
    const p = await createProject({ start: false });
    // What `npm install` puts there: the project's package.json lists @wardrik/protocol, which ships the schemas.
    expect(JSON.parse(p.read("package.json")).dependencies).toHaveProperty("@wardrik/protocol");
    mkdirSync(join(p.dir, "node_modules", "@wardrik"), { recursive: true });
    symlinkSync(join(REPO_ROOT, "packages", "protocol"), join(p.dir, "node_modules", "@wardrik", "protocol"), "dir");
    for (const [kind, file] of [
      ["config", "config.yaml"],
      ["policy", "policies/default.yaml"],
    ] as const) {
      const match = /^# yaml-language-server: \$schema=(.+)$/m.exec(p.read(file).split("\n")[0]!);
      expect(match, `${file} starts with the yaml-language-server comment`).not.toBeNull();
      const named = match![1]!;
      // Relative, so the project can move or be cloned: the editor resolves it against the file's folder.
      expect(isAbsolute(named)).toBe(false);
      expect(named).toBe(`${file.includes("/") ? ".." : "."}/node_modules/@wardrik/protocol/schemas/${kind}.json`);
      const resolved = resolve(dirname(join(p.dir, file)), named);
      expect(existsSync(resolved), resolved).toBe(true);
      const printed = await p.cli(["schema", kind]);
      expect(JSON.parse(readFileSync(resolved, "utf8"))).toEqual(JSON.parse(printed.stdout));
    }
  });

  it("config's schema has worker_grace: seconds >= 0, default 30", async () => {
    const p = await createProject({ start: false });
    const schema = JSON.parse((await p.cli(["schema", "config"])).stdout) as { properties: Record<string, Record<string, unknown>> };
    expect(schema.properties.worker_grace).toMatchObject({ type: "number", minimum: 0, default: 30 });
    expect(String(schema.properties.worker_grace!.description)).toMatch(/wait for a worker after a start or a takeover/);
  });

  it("refuses an unknown kind as a usage error", async () => {
    const p = await createProject({ start: false });
    const r = await p.cli(["schema", "agents"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/config, agent, policy/);
  });
});
