/**
 * The JSON Schemas made from the zod schemas: they accept the project that
 * `wardrik init` writes, name an unknown key, and agree with the daemon's own
 * loaders on files that use every new key. Checked with ajv, an independent
 * JSON Schema implementation.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ajv, type ErrorObject } from "ajv";
import { parse as parseYaml } from "yaml";
import { afterAll, describe, expect, it } from "vitest";
import { initProject } from "../../src/cli/init-project.js";
import { parseAgentFile, parseConfig } from "../../src/config/index.js";
import { SCHEMA_KINDS, jsonSchemaFor, withSchemaComment, schemaFile, type SchemaKind } from "../../src/editor-schemas.js";
import { parsePolicyFile } from "../../src/policy/index.js";

const tmp = mkdtempSync(join(tmpdir(), "wardrik-schemas-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const ajv = new Ajv({ allErrors: true, strict: false });
const validators = Object.fromEntries(SCHEMA_KINDS.map((kind) => [kind, ajv.compile(jsonSchemaFor(kind))]));

function errorsOf(kind: SchemaKind, value: unknown): ErrorObject[] {
  const validate = validators[kind]!;
  return validate(value) ? [] : (validate.errors ?? []);
}

function frontmatter(text: string): unknown {
  return parseYaml(/^---\n([\s\S]*?)\n---/.exec(text)![1]!);
}

const project = join(tmp, "project");
initProject(project);
const read = (file: string) => readFileSync(join(project, file), "utf8");

describe("JSON Schemas for editors", () => {
  it("are draft-7 schemas that ajv accepts, one per kind", () => {
    for (const kind of SCHEMA_KINDS) {
      const schema = jsonSchemaFor(kind);
      expect(schema.$schema).toBe("http://json-schema.org/draft-07/schema#");
      expect(ajv.validateSchema(schema)).toBe(true);
    }
  });

  it("validate the project that wardrik init writes", () => {
    expect(errorsOf("config", parseYaml(read("config.yaml")))).toEqual([]);
    expect(errorsOf("policy", parseYaml(read("policies/default.yaml")))).toEqual([]);
    expect(errorsOf("agent", frontmatter(read("agents/helper.md")))).toEqual([]);
  });

  it("reject an unknown key in each kind of file, naming it", () => {
    const config = { ...(parseYaml(read("config.yaml")) as object), modles: {} };
    expect(errorsOf("config", config)).toContainEqual(expect.objectContaining({ params: { additionalProperty: "modles" } }));
    const policy = parseYaml(read("policies/default.yaml")) as { rules: Record<string, unknown>[] };
    policy.rules[0]!.decison = "allow";
    expect(errorsOf("policy", policy)).toContainEqual(
      expect.objectContaining({ instancePath: "/rules/0", params: { additionalProperty: "decison" } }),
    );
    const agent = { ...(frontmatter(read("agents/helper.md")) as object), max_iteratons: 3 };
    expect(errorsOf("agent", agent)).toContainEqual(expect.objectContaining({ params: { additionalProperty: "max_iteratons" } }));
  });

  it("reject wrong values the daemon rejects too", () => {
    const config = { models: { m: { provider: "openai-compatible", model: "x" } }, tool_timeout: 0 };
    const paths = errorsOf("config", config).map((e) => `${e.instancePath} ${e.keyword}`);
    expect(paths).toContain("/models/m required"); // base_url, for openai-compatible
    expect(paths).toContain("/tool_timeout exclusiveMinimum");
    expect(errorsOf("policy", { rules: [{ tool: "files/*", decision: "maybe" }] }).map((e) => e.instancePath)).toContain(
      "/rules/0/decision",
    );
    expect(errorsOf("agent", { description: "d", triggers: [{ message: "m" }] }).length).toBeGreaterThan(0);
    expect(errorsOf("agent", { description: "d", model: [] }).map((e) => e.instancePath)).toContain("/model");
    expect(() => parseAgentFile("---\ndescription: d\nmodel: []\n---\nx\n", "agents/x.md")).toThrow(/model/);
  });

  it("accept every key the issues add, as the daemon's loaders do", () => {
    const configText = `
tool_timeout: 30
cluster: { lease: 15 }
subscribers:
  - url: https://ops.example.com/wardrik
    types: [turn.completed, approval.requested, "agent.*"]
    agents: [triage]
    secret: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw
slack:
  bot_token: xoxb-1
  signing_secret: s3
  api_url: http://127.0.0.1:9/api
  channels: { C0123ABCD: triage }
  approvers: [U0456EFGH]
telemetry:
  endpoint: http://127.0.0.1:4318
  protocol: http/json
  headers: { x-team: blue }
  service_name: wardrik-test
  sampler: parentbased_traceidratio
  sampler_arg: 0.5
  capture_message_content: false
  metrics_listen: 127.0.0.1:9464
`;
    expect(errorsOf("config", parseYaml(configText))).toEqual([]);
    const config = parseConfig(configText, tmp);
    expect(config).toMatchObject({
      tool_timeout: 30,
      cluster: { lease: 15 },
      subscribers: [{ agents: ["triage"], types: ["turn.completed", "approval.requested", "agent.*"] }],
      slack: { channels: { C0123ABCD: "triage" }, approvers: ["U0456EFGH"] },
      telemetry: { protocol: "http/json", metrics_listen: { host: "127.0.0.1", port: 9464 } },
    });

    const agentText = `---
description: Watches deploys
model: [anthropic/claude-sonnet-4-5, openai/gpt-5-mini]
triggers:
  - schedule: "0 9 * * 1-5"
    timezone: Europe/Berlin
    message: Morning check
    conversation: mornings
  - webhook: deploy
    secret: \${secret:DEPLOY_HOOK}
    message: "Deployed {{service}}"
  - event: { agent: triage, types: [agent.parked] }
    message: triage waits for a person
---
Watch.
`;
    expect(errorsOf("agent", frontmatter(agentText))).toEqual([]);
    expect(parseAgentFile(agentText, "agents/watcher.md").triggers).toHaveLength(3);
    expect(parseAgentFile(agentText, "agents/watcher.md").model).toEqual(["anthropic/claude-sonnet-4-5", "openai/gpt-5-mini"]);
  });

  it("ship as files with the text the zod schemas make now (the build writes them; wardrik schema prints them)", () => {
    for (const kind of SCHEMA_KINDS) {
      const text = `${JSON.stringify(jsonSchemaFor(kind), null, 2)}\n`;
      expect(readFileSync(schemaFile(kind), "utf8")).toBe(text);
      // The copy @wardrik/protocol ships, which projects' files name.
      expect(readFileSync(new URL(`../../../protocol/schemas/${kind}.json`, import.meta.url), "utf8")).toBe(text);
    }
  });

  it("name the schema file in the project's node_modules in config.yaml and policy files, nowhere else", () => {
    expect(read("config.yaml").split("\n")[0]).toBe("# yaml-language-server: $schema=./node_modules/@wardrik/protocol/schemas/config.json");
    expect(read("policies/default.yaml").split("\n")[0]).toBe(
      "# yaml-language-server: $schema=../node_modules/@wardrik/protocol/schemas/policy.json",
    );
    expect(read("agents/helper.md").startsWith("---\n")).toBe(true);
    expect(withSchemaComment("policies/strict.yml", "rules: []\n")).toMatch(/^# yaml-language-server: \$schema=.*policy\.json\nrules/);
    expect(withSchemaComment("workers/tools.ts", "x")).toBe("x");
    // The comment is a comment: the files still load.
    expect(parseConfig(read("config.yaml"), project).org).toBe("default");
    expect(parsePolicyFile(read("policies/default.yaml"), "policies/default.yaml").rules[0]?.source).toBe("policies/default.yaml:7");
  });
});
