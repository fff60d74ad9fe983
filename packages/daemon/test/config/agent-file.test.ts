import { describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AGENT_DEFAULTS, ConfigError, parseAgentFile, validateAgentDefinition } from "../../src/config/index.js";

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    if (ConfigError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

const agent = (frontmatter: string, body = "You help.") => `---\n${frontmatter}---\n${body}\n`;
const FILE = "agents/triage.md";

describe("parseAgentFile", () => {
  it("reads the seed example and fills every default", () => {
    const text =
      "---\ndescription: Keeps notes on the incident queue.\ntools: [files, linear/*]\npolicy: careful\n---\n\nYou help the on-call engineer.\n\n";
    expect(parseAgentFile(text, FILE)).toStrictEqual({
      name: "triage",
      description: "Keeps notes on the incident queue.",
      title: "triage",
      tools: ["files", "linear/*"],
      policy: "careful",
      max_iterations: 20,
      timeout: 600,
      retries: 2,
      idle_timeout: 900,
      instructions: "You help the on-call engineer.",
    });
    expect(AGENT_DEFAULTS).toEqual({ max_iterations: 20, timeout: 600, retries: 2, idle_timeout: 900, max_depth: 3 });
  });

  it("defaults tools to none and leaves model, policy, budget and context_window unset", () => {
    const definition = parseAgentFile(agent("description: d\n"), FILE);
    expect(definition.tools).toEqual([]);
    for (const key of ["model", "policy", "budget", "context_window"]) expect(definition).not.toHaveProperty(key);
  });

  it("reads every key", () => {
    const text = agent(
      [
        "description: Sorts tickets",
        "title: Triage bot",
        "model: local",
        "tools:",
        "  - files/*",
        "  - workers/find_order",
        "  - '*'",
        "policy: careful",
        "max_iterations: 5",
        "timeout: 30.5",
        "retries: 0",
        "idle_timeout: infinity",
        "budget: 2.5",
        "context_window: 8192",
        "agents: [researcher, writer]",
        "max_depth: 2",
        "",
      ].join("\n"),
      "Line one.\n\nLine two.",
    );
    expect(parseAgentFile(text, FILE)).toStrictEqual({
      name: "triage",
      description: "Sorts tickets",
      title: "Triage bot",
      model: "local",
      tools: ["files/*", "workers/find_order", "*"],
      policy: "careful",
      max_iterations: 5,
      timeout: 30.5,
      retries: 0,
      idle_timeout: "infinity",
      budget: 2.5,
      context_window: 8192,
      agents: ["researcher", "writer"],
      max_depth: 2,
      instructions: "Line one.\n\nLine two.",
    });
  });

  it("refuses an agents entry that is not an agent name, and a max_depth that is not a positive whole number", () => {
    expect(() => parseAgentFile(agent("description: d\nagents: [good, 'not a name']\n"), FILE)).toThrow(
      /agents\/triage\.md:3: agents\[1\] must be/,
    );
    expect(() => parseAgentFile(agent("description: d\nmax_depth: 0\n"), FILE)).toThrow(/agents\/triage\.md:3: max_depth/);
  });

  it("accepts CRLF line endings, a BOM and an empty body", () => {
    const definition = parseAgentFile("\uFEFF---\r\ndescription: d\r\nidle_timeout: 60\r\n---\r\n", FILE);
    expect(definition.idle_timeout).toBe(60);
    expect(definition.instructions).toBe("");
  });

  it("keeps a --- line in the body", () => {
    expect(parseAgentFile(agent("description: d\n", "Intro\n---\nMore"), FILE).instructions).toBe("Intro\n---\nMore");
  });

  it("names an unknown key with the file, the .md line and the allowed keys", () => {
    const error = configError(() => parseAgentFile(agent("description: d\ntitle: t\nmax_iteratons: 3\n"), FILE));
    expect(error.message).toBe(
      'agents/triage.md:4: key "max_iteratons" is not allowed: did you mean "max_iterations"? (allowed: description, title, model, tools, policy, max_iterations, timeout, retries, idle_timeout, budget, context_window, output, agents, max_depth, triggers)',
    );
    expect(error.file).toBe(FILE);
    expect(error.line).toBe(4);
    expect(error.key).toBe("max_iteratons");
  });

  it("lists every problem of the file at once, in the order of the file, with a guess for each misspelt key", () => {
    const error = configError(() =>
      parseAgentFile(agent("description: d\nmodle: local\ntools: [files, 3]\nmax_iterations: -1\ntimeuot: 60\nidle_timeout: soon\n"), FILE),
    );
    expect(error.message.split("\n")).toEqual([
      expect.stringMatching(/^agents\/triage\.md:3: key "modle" is not allowed: did you mean "model"\? \(allowed: /),
      "agents/triage.md:4: tools[1] must be a string",
      "agents/triage.md:5: max_iterations must be a positive integer",
      expect.stringMatching(/^agents\/triage\.md:6: key "timeuot" is not allowed: did you mean "timeout"\? \(allowed: /),
      "agents/triage.md:7: idle_timeout must be a positive number of seconds or infinity",
    ]);
    expect(error.line).toBe(3);
    expect(error.problems.map((p) => p.key)).toEqual(["modle", "tools[1]", "max_iterations", "timeuot", "idle_timeout"]);
  });

  it.each([
    ["max_iterations: 0", "max_iterations must be a positive integer"],
    ["max_iterations: 2.5", "max_iterations must be a positive integer"],
    ["max_iterations: ten", "max_iterations must be a number"],
    ["timeout: -1", "timeout must be a positive number"],
    ["retries: -1", "retries must be an integer >= 0"],
    ["idle_timeout: forever", "idle_timeout must be a positive number of seconds or infinity"],
    ["idle_timeout: 0", "idle_timeout must be a positive number of seconds or infinity"],
    ["budget: 0", "budget must be a positive number"],
    ["context_window: 1e3.5", "context_window must be a number"],
    ["title: 3", "title must be a string"],
    ["model: []", "model must name at least one model"],
    ["model: 3", "model must be a model (provider/model-id or a name from config.yaml models) or a list of them"],
    ["tools: files", "tools must be a list"],
    ["policy: no good", "policy must be 1-55 letters, digits, _ or - (a file in policies/)"],
  ])("rejects %j at line 3", (line, detail) => {
    const error = configError(() => parseAgentFile(agent(`description: d\n${line}\n`), FILE));
    expect(error.message).toBe(`agents/triage.md:3: ${detail}`);
    expect(error.key).toBe(line.split(":")[0]);
  });

  it("points at the bad list item of tools", () => {
    const error = configError(() =>
      parseAgentFile(agent("description: d\ntools:\n  - files\n  - linear/**/x\n  - workers/find_order\n"), FILE),
    );
    expect(error.message).toBe(
      'agents/triage.md:5: tools[1] "linear/**/x" is not a tool pattern (like files, linear/*, workers/find_order or *)',
    );
    expect(error.key).toBe("tools[1]");
  });

  it.each(["a b", "files/", "/x", "x/y/z", ""])("rejects the tool pattern %j", (pattern) => {
    expect(configError(() => parseAgentFile(agent(`description: d\ntools: ["${pattern}"]\n`), FILE)).key).toBe("tools[0]");
  });

  it("requires description, reported at the opening --- line", () => {
    const error = configError(() => parseAgentFile(agent("title: t\n"), FILE));
    expect(error.message).toBe('agents/triage.md:1: key "description" is required');
    expect(error.key).toBe("description");
    expect(configError(() => parseAgentFile("---\n---\nbody\n", FILE)).line).toBe(1);
  });

  it("rejects a file without frontmatter, or with unclosed frontmatter, at line 1", () => {
    const missing = configError(() => parseAgentFile("# Triage\n\ndescription: d\n", FILE));
    expect(missing.message).toMatch(/^agents\/triage\.md:1: an agent file must start with YAML frontmatter/);
    const unclosed = configError(() => parseAgentFile("---\ndescription: d\nbody\n", FILE));
    expect(unclosed.message).toBe("agents/triage.md:1: the frontmatter opened here has no closing --- line");
  });

  it("reports bad YAML at its line in the .md file", () => {
    const error = configError(() => parseAgentFile(agent("description: d\ntitle: t\ntools: [files\nretries: 1\n"), FILE));
    expect(error.line).toBe(5);
    expect(error.message).toMatch(/^agents\/triage\.md:5: invalid YAML: /);
  });

  it("rejects frontmatter that is not a mapping", () => {
    expect(configError(() => parseAgentFile(agent("- a\n"), FILE)).message).toBe("agents/triage.md:1: the top level must be a mapping");
  });

  it("rejects a file name that is not a valid agent name", () => {
    const error = configError(() => parseAgentFile(agent("description: d\n"), "agents/my agent.md"));
    expect(error.message).toBe('agents/my agent.md: agent name "my agent" (the file name) must be 1-55 letters, digits, _ or -');
    expect(error.key).toBe("name");
    expect(() => parseAgentFile(agent("description: d\n"), `agents/${"a".repeat(56)}.md`)).toThrow(/agent name/);
  });
});

describe("validateAgentDefinition", () => {
  it("applies the same defaults to a JSON body", () => {
    expect(validateAgentDefinition({ name: "helper", description: "Helps", instructions: "  Be kind.  " }, "request body")).toStrictEqual({
      name: "helper",
      description: "Helps",
      title: "helper",
      tools: [],
      max_iterations: 20,
      timeout: 600,
      retries: 2,
      idle_timeout: 900,
      instructions: "Be kind.",
    });
  });

  it("defaults instructions to empty and keeps optional keys", () => {
    const definition = validateAgentDefinition(
      { name: "h", description: "d", model: "openai/gpt-4o", budget: 1, idle_timeout: "infinity" },
      "request body",
    );
    expect(definition).toMatchObject({ instructions: "", model: "openai/gpt-4o", budget: 1, idle_timeout: "infinity" });
  });

  it("names the key, without a line", () => {
    const error = configError(() => validateAgentDefinition({ name: "h", description: "d", retries: "2" }, "request body"));
    expect(error.message).toBe("request body: retries must be a number");
    expect(error.line).toBeUndefined();
    expect(error.key).toBe("retries");
  });

  it("rejects unknown keys, a bad or missing name, and a body that is not an object", () => {
    expect(configError(() => validateAgentDefinition({ name: "h", description: "d", prompt: "x" }, "body")).message).toMatch(
      /^body: key "prompt" is not allowed \(allowed: name, description, .*, instructions\)$/,
    );
    expect(configError(() => validateAgentDefinition({ name: "h/x", description: "d" }, "body")).message).toBe(
      "body: name must be 1-55 letters, digits, _ or -",
    );
    expect(configError(() => validateAgentDefinition({ description: "d" }, "body")).message).toBe('body: key "name" is required');
    expect(configError(() => validateAgentDefinition({ name: "h" }, "body")).key).toBe("description");
    expect(configError(() => validateAgentDefinition([], "body")).message).toBe("body: the top level must be a mapping");
    expect(configError(() => validateAgentDefinition({ name: "h", description: "d", tools: ["a b"] }, "body")).key).toBe("tools[0]");
  });
});

describe("output: the reply's JSON Schema", () => {
  const schema = { type: "object", required: ["summary"] };

  it("takes a schema inline, or reads a path from the project directory when the file is read", () => {
    expect(parseAgentFile(agent(`description: d\noutput: ${JSON.stringify(schema)}\n`), FILE).output).toEqual(schema);
    const dir = mkdtempSync(join(tmpdir(), "wardrik-output-"));
    try {
      mkdirSync(join(dir, "schemas"));
      writeFileSync(join(dir, "schemas", "report.json"), JSON.stringify(schema));
      writeFileSync(join(dir, "schemas", "broken.json"), "{ nope");
      const read = (path: string) => parseAgentFile(agent(`description: d\noutput: ${path}\n`), FILE, { projectDir: dir });
      expect(read("schemas/report.json").output).toEqual(schema);
      expect(configError(() => read("schemas/missing.json")).message).toBe(
        'agents/triage.md:3: output: cannot read the schema file "schemas/missing.json" (ENOENT)',
      );
      expect(configError(() => read("schemas/broken.json")).message).toMatch(
        /^agents\/triage\.md:3: output: "schemas\/broken\.json" is not JSON: /,
      );
      expect(configError(() => read("../outside.json")).message).toBe(
        'agents/triage.md:3: output: "../outside.json" is outside the project directory',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("rejects what is neither a schema nor a path; a JSON body takes only an inline schema", () => {
    expect(configError(() => parseAgentFile(agent("description: d\noutput: 3\n"), FILE)).message).toBe(
      "agents/triage.md:3: output must be a JSON Schema (an object) or the path of a JSON file holding one, relative to the project",
    );
    expect(validateAgentDefinition({ name: "h", description: "d", output: schema }, "body").output).toEqual(schema);
    expect(configError(() => validateAgentDefinition({ name: "h", description: "d", output: "schemas/x.json" }, "body")).message).toBe(
      "body: output: must be a JSON Schema object here (a path needs a project directory)",
    );
  });
});
