/**
 * Parsed YAML that remembers where every key and value came from, and the
 * error that points there.
 */
import { LineCounter, isAlias, isMap, isScalar, isSeq, parseDocument, type Document } from "yaml";

/** A path into a value: `["models", "local", "price", "input"]`, `["tools", 1]`. */
export type KeyPath = readonly (string | number)[];

/** `models.local.price.input`, `subscribers[0].url`; a key that is not a plain word reads `when["customer.country"]`. */
export function formatKeyPath(path: KeyPath): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (!PLAIN_KEY.test(segment)) out += `[${JSON.stringify(segment)}]`;
    else out += out === "" ? segment : `.${segment}`;
  }
  return out;
}

const PLAIN_KEY = /^[A-Za-z_$][\w$-]*$/;

const MARKER = Symbol.for("wardrik.config_error");

/** One more problem of the same file, after the first. */
export interface ConfigProblem {
  line: number | undefined;
  key: string | undefined;
  detail: string;
}

/**
 * A file or body that cannot be used. The message reads `file:line: what is
 * wrong`, one line per problem when there are several (the first names the
 * error's own `line`, `key` and `detail`; `more` holds the others).
 */
export class ConfigError extends Error {
  readonly [MARKER] = true;
  /** Relative to the project directory (`agents/triage.md`), or a label such as `request body`. */
  readonly file: string;
  /** 1-based line in `file`; absent for JSON input. */
  readonly line: number | undefined;
  /** The offending key path, e.g. `models.local.price.input`. */
  readonly key: string | undefined;
  /** The first problem without its `file:line: ` prefix. */
  readonly detail: string;
  /** The problems after the first, in the order of the file. */
  readonly more: readonly ConfigProblem[];

  constructor(init: {
    file: string;
    line?: number | undefined;
    key?: string | undefined;
    detail: string;
    more?: readonly ConfigProblem[];
  }) {
    const at = (line: number | undefined) => `${init.file}${line === undefined ? "" : `:${line}`}: `;
    const more = init.more ?? [];
    super([`${at(init.line)}${init.detail}`, ...more.map((p) => `${at(p.line)}${p.detail}`)].join("\n"));
    this.name = "ConfigError";
    this.file = init.file;
    this.line = init.line;
    this.key = init.key;
    this.detail = init.detail;
    this.more = more;
  }

  /** Every problem: the first, then `more`. */
  get problems(): ConfigProblem[] {
    return [{ line: this.line, key: this.key, detail: this.detail }, ...this.more];
  }

  /** Works across bundles and package copies, unlike `instanceof`. */
  static isInstance(value: unknown): value is ConfigError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[MARKER] === true;
  }
}

/** A parsed value plus the means to report an error at one of its keys. */
export class Source {
  constructor(
    readonly file: string,
    readonly value: unknown,
    private readonly locate: (path: KeyPath, where: "key" | "value") => number | undefined = () => undefined,
  ) {}

  /** 1-based line of the key (or list item) at `path`, or of its deepest existing parent. */
  lineOf(path: KeyPath): number | undefined {
    return this.locate(path, "key");
  }

  /** 1-based line where the value at `path` starts (a block list starts below its key); else as lineOf. */
  valueLineOf(path: KeyPath): number | undefined {
    return this.locate(path, "value");
  }

  /** The same file and lines over another value, e.g. the value with references resolved. */
  withValue(value: unknown): Source {
    return new Source(this.file, value, this.locate);
  }

  /** Throws a ConfigError about `path`, placed at the line of `at` (default `path`). */
  fail(path: KeyPath, detail: string, at: KeyPath = path): never {
    throw new ConfigError({
      file: this.file,
      line: this.lineOf(at),
      key: path.length === 0 ? undefined : formatKeyPath(path),
      detail,
    });
  }
}

export interface YamlSourceOptions {
  /** Line number, in `file`, of the first line of `text` (frontmatter starts at 2). */
  firstLine?: number;
  /** Line reported for the document as a whole, e.g. a missing required key. */
  rootLine?: number;
}

/** Parses one YAML document; syntax errors throw a ConfigError at the parser's line. */
export function parseYamlSource(text: string, file: string, options: YamlSourceOptions = {}): Source {
  const firstLine = options.firstLine ?? 1;
  const rootLine = options.rootLine ?? firstLine;
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, prettyErrors: false, uniqueKeys: true });
  const lineAt = (offset: number): number => counter.linePos(offset).line + firstLine - 1;

  const syntax = doc.errors[0];
  if (syntax !== undefined) {
    // An unquoted `*` starts an alias in YAML, and tool patterns often start with one.
    const hint = syntax.code === "BAD_ALIAS" ? ' (a pattern starting with * must be quoted: tool: "*")' : "";
    throw new ConfigError({ file, line: lineAt(syntax.pos[0]), detail: `invalid YAML: ${syntax.message}${hint}` });
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    throw new ConfigError({ file, line: rootLine, detail: `invalid YAML: ${(error as Error).message}` });
  }
  return new Source(file, value, (path, where) => locate(doc, path, where, lineAt, rootLine));
}

/** A Source over plain data (a JSON body): errors name the key but no line. */
export function plainSource(value: unknown, where: string): Source {
  return new Source(where, value);
}

function locate(doc: Document, path: KeyPath, where: "key" | "value", lineAt: (offset: number) => number, rootLine: number): number {
  let node: unknown = doc.contents;
  let line = rootLine;
  for (const segment of path) {
    if (isAlias(node)) node = node.resolve(doc);
    let found: { range?: unknown } | undefined;
    let next: unknown;
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(segment));
      found = pair?.key as { range?: unknown } | undefined;
      next = pair?.value;
    } else if (isSeq(node) && typeof segment === "number") {
      found = next = node.items[segment] as { range?: unknown } | undefined;
    }
    const range = found?.range;
    if (!Array.isArray(range) || typeof range[0] !== "number") return line;
    line = lineAt(range[0]);
    node = next;
  }
  if (where === "value") {
    const range = (node as { range?: unknown } | undefined)?.range;
    // `key:` with nothing after it has an empty value; its key's line is the useful one.
    const empty = isScalar(node) && node.value === null && Array.isArray(range) && range[0] === range[1];
    if (Array.isArray(range) && typeof range[0] === "number" && !empty) return lineAt(range[0]);
  }
  return line;
}
