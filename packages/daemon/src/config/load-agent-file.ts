import { readFileSync, readdirSync, type Dirent } from "node:fs";
import path from "node:path";
import { isValidName } from "@wardrik/protocol";
import { AGENT_DEFAULTS, type AgentDefinition } from "./types.js";
import {
  ConfigError,
  type KeyPath,
  type Source,
  formatKeyPath,
  parseYamlSource,
  plainSource,
  readMap,
  readNumber,
  readRequired,
  readString,
  readStringList,
} from "./yaml-source.js";

/** Frontmatter keys, as in SPEC section 2. */
const AGENT_KEYS = [
  "description",
  "title",
  "model",
  "tools",
  "policy",
  "max_iterations",
  "timeout",
  "retries",
  "idle_timeout",
  "budget",
  "context_window",
];
/** A JSON body also carries what a file gets from its name and body. */
const JSON_KEYS = ["name", ...AGENT_KEYS, "instructions"];

const NAME_RULE = "1-55 letters, digits, _ or -";
/** `*`, `files`, `files/*`, `workers/find_order`, `workers/find_*`. */
const TOOL_PATTERN = /^(\*|[A-Za-z0-9_-]{1,55})(\/[A-Za-z0-9_*-]{1,55})?$/;

/** Parses an agent file: YAML frontmatter between `---` lines, then the instructions. */
export function parseAgentFile(text: string, file: string): AgentDefinition {
  const name = path.basename(file).replace(/\.md$/, "");
  if (!isValidName(name)) {
    throw new ConfigError({ file, key: "name", detail: `agent name "${name}" (the file name) must be ${NAME_RULE}` });
  }
  const { frontmatter, body } = splitFrontmatter(text, file);
  // Frontmatter starts on line 2; whole-document errors point at the opening `---`.
  const src = parseYamlSource(frontmatter, file, { firstLine: 2, rootLine: 1 });
  const map = src.value === null || src.value === undefined ? {} : readMap(src, [], src.value, AGENT_KEYS);
  return readAgent(src, map, name, body);
}

/** Validates an agent given as JSON (the HTTP API); errors name `where` and the key. */
export function validateAgentDefinition(input: unknown, where: string): AgentDefinition {
  const src = plainSource(input, where);
  const map = readMap(src, [], input, JSON_KEYS);
  const name = readString(src, ["name"], readRequired(src, [], map, "name"));
  if (!isValidName(name)) src.fail(["name"], `name must be ${NAME_RULE}`);
  const instructions = map.instructions === undefined ? "" : readString(src, ["instructions"], map.instructions, { allowEmpty: true });
  return readAgent(src, map, name, instructions.trim());
}

export interface AgentFileResult {
  /** The agent name taken from the file name. */
  name: string;
  /** Relative to the project directory, e.g. `agents/triage.md`. */
  file: string;
  definition?: AgentDefinition;
  /** Why the file cannot be used; set instead of `definition`. */
  error?: string;
}

/** Reads every `agents/*.md` of a project, sorted by file name; a bad file gets `error`, never a throw. */
export function loadAgentsDir(dir: string): AgentFileResult[] {
  const agentsDir = path.join(dir, "agents");
  let entries: Dirent[];
  try {
    entries = readdirSync(agentsDir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const names = entries
    // Hidden names include editor lock files such as `.#triage.md`.
    .filter((e) => e.name.endsWith(".md") && !e.name.startsWith(".") && (e.isFile() || e.isSymbolicLink()))
    .map((e) => e.name)
    .sort();
  return names.map((entry) => {
    const file = `agents/${entry}`;
    const name = entry.slice(0, -".md".length);
    try {
      return { name, file, definition: parseAgentFile(readFileSync(path.join(agentsDir, entry), "utf8"), file) };
    } catch (error) {
      if (ConfigError.isInstance(error)) return { name, file, error: error.message };
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      return { name, file, error: `${file}: cannot be read (${code})` };
    }
  });
}

function splitFrontmatter(text: string, file: string): { frontmatter: string; body: string } {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  const isFence = (line: string | undefined): boolean => line?.trimEnd() === "---";
  if (!isFence(lines[0])) {
    throw new ConfigError({
      file,
      line: 1,
      detail: "an agent file must start with YAML frontmatter between --- lines (description is required)",
    });
  }
  const close = lines.findIndex((line, i) => i > 0 && isFence(line));
  if (close === -1) throw new ConfigError({ file, line: 1, detail: "the frontmatter opened here has no closing --- line" });
  return {
    frontmatter: lines.slice(1, close).join("\n"),
    body: lines
      .slice(close + 1)
      .join("\n")
      .trim(),
  };
}

function readAgent(src: Source, map: Record<string, unknown>, name: string, instructions: string): AgentDefinition {
  const optional = <T>(key: string, read: (path: KeyPath, value: unknown) => T): T | undefined =>
    map[key] === undefined ? undefined : read([key], map[key]);
  const text = (path: KeyPath, value: unknown): string => readString(src, path, value);

  const agent: AgentDefinition = {
    name,
    description: text(["description"], readRequired(src, [], map, "description")),
    title: optional("title", text) ?? name,
    tools: optional("tools", (path, value) => readTools(src, path, value)) ?? [],
    max_iterations: optional("max_iterations", (p, v) => readNumber(src, p, v, "a positive integer")) ?? AGENT_DEFAULTS.max_iterations,
    timeout: optional("timeout", (p, v) => readNumber(src, p, v, "a positive number")) ?? AGENT_DEFAULTS.timeout,
    retries: optional("retries", (p, v) => readNumber(src, p, v, "an integer >= 0")) ?? AGENT_DEFAULTS.retries,
    idle_timeout: optional("idle_timeout", (p, v) => readIdleTimeout(src, p, v)) ?? AGENT_DEFAULTS.idle_timeout,
    instructions,
  };
  const model = optional("model", text);
  if (model !== undefined) agent.model = model;
  const policy = optional("policy", text);
  if (policy !== undefined) {
    if (!isValidName(policy)) src.fail(["policy"], `policy must be ${NAME_RULE} (a file in policies/)`);
    agent.policy = policy;
  }
  const budget = optional("budget", (p, v) => readNumber(src, p, v, "a positive number"));
  if (budget !== undefined) agent.budget = budget;
  const contextWindow = optional("context_window", (p, v) => readNumber(src, p, v, "a positive integer"));
  if (contextWindow !== undefined) agent.context_window = contextWindow;
  return agent;
}

function readTools(src: Source, path: KeyPath, value: unknown): string[] {
  const tools = readStringList(src, path, value);
  tools.forEach((tool, i) => {
    if (!TOOL_PATTERN.test(tool)) {
      src.fail(
        [...path, i],
        `${formatKeyPath([...path, i])} "${tool}" is not a tool pattern (like files, linear/*, workers/find_order or *)`,
      );
    }
  });
  return tools;
}

function readIdleTimeout(src: Source, path: KeyPath, value: unknown): number | "infinity" {
  if (value === "infinity") return value;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    return src.fail(path, `${formatKeyPath(path)} must be a positive number of seconds or infinity`);
  }
  return value;
}
