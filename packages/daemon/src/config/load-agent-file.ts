import { readFileSync, readdirSync, type Dirent } from "node:fs";
import path from "node:path";
import { isValidName } from "@wardrik/protocol";
import { agentBodySchema, agentFrontmatterSchema } from "./agent-schema.js";
import { readWithSchema } from "./read-with-schema.js";
import type { ReferenceSources } from "./references.js";
import { NAME_RULE } from "./schema-kit.js";
import { checkTriggers } from "./check-triggers.js";
import { resolveOutputSchema } from "./output-schema.js";
import type { AgentDefinition } from "./types.js";
import { ConfigError, parseYamlSource, plainSource } from "./yaml-source.js";

export interface AgentFileOptions {
  /** Where triggers' `${secret:NAME}` and `${env:NAME}` are looked up; without it they are not checked. */
  references?: ReferenceSources;
  /** Where an `output: schemas/x.json` path is read from; without it only an inline schema is accepted. */
  projectDir?: string;
}

/** Parses an agent file: YAML frontmatter between `---` lines, then the instructions. */
export function parseAgentFile(text: string, file: string, options: AgentFileOptions = {}): AgentDefinition {
  const name = path.basename(file).replace(/\.md$/, "");
  if (!isValidName(name)) {
    throw new ConfigError({ file, key: "name", detail: `agent name "${name}" (the file name) must be ${NAME_RULE}` });
  }
  const { frontmatter, body } = splitFrontmatter(text, file);
  // Frontmatter starts on line 2; whole-document errors point at the opening `---`.
  const src = parseYamlSource(frontmatter, file, { firstLine: 2, rootLine: 1 });
  const { output: written, ...fields } = readWithSchema(agentFrontmatterSchema, src.withValue(src.value ?? {}));
  checkTriggers(name, fields.triggers ?? [], src, options.references);
  const output = resolveOutputSchema(written, src, options.projectDir);
  return { name, ...fields, ...(output ? { output } : {}), title: fields.title ?? name, instructions: body };
}

/** Validates an agent given as JSON (the HTTP API); errors name `where` and the key. */
export function validateAgentDefinition(input: unknown, where: string): AgentDefinition {
  const src = plainSource(input, where);
  const { instructions, output: written, ...fields } = readWithSchema(agentBodySchema, src);
  checkTriggers(fields.name, fields.triggers ?? [], src);
  const output = resolveOutputSchema(written, src, undefined);
  return { ...fields, ...(output ? { output } : {}), title: fields.title ?? fields.name, instructions: (instructions ?? "").trim() };
}

export interface AgentFileResult {
  /** The agent name taken from the file name. */
  name: string;
  /** Relative to the project directory, e.g. `agents/triage.md`. */
  file: string;
  definition?: AgentDefinition;
  /** Why the file cannot be used; set instead of `definition`. */
  error?: string;
  /**
   * With `error`: the `policy` and `model` the frontmatter names, when they are
   * strings, so whoever knows the policies and models can say what is wrong
   * with them too (every problem of a file at once).
   */
  named?: { policy?: string; model?: string };
}

/** Reads every `agents/*.md` of a project, sorted by file name; a bad file gets `error`, never a throw. */
export function loadAgentsDir(dir: string, options: AgentFileOptions = {}): AgentFileResult[] {
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
    let text = "";
    try {
      text = readFileSync(path.join(agentsDir, entry), "utf8");
      return { name, file, definition: parseAgentFile(text, file, { projectDir: dir, ...options }) };
    } catch (error) {
      if (ConfigError.isInstance(error)) return { name, file, error: error.message, ...namedIn(text) };
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      return { name, file, error: `${file}: cannot be read (${code})` };
    }
  });
}

/** The policy and model a frontmatter names, read without checking the rest (it has problems of its own). */
function namedIn(text: string): { named?: { policy?: string; model?: string } } {
  try {
    const { frontmatter } = splitFrontmatter(text, "");
    const value = parseYamlSource(frontmatter, "").value as Record<string, unknown> | null;
    const pick = (key: string) => (typeof value?.[key] === "string" ? { [key]: value[key] } : {});
    const named = { ...pick("policy"), ...pick("model") };
    return Object.keys(named).length > 0 ? { named } : {};
  } catch {
    return {};
  }
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
