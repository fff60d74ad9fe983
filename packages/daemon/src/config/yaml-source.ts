/**
 * Parsed YAML that remembers where every key came from, the error that points
 * there, and typed reads that fail with the key's path and line.
 */
import { LineCounter, isAlias, isMap, isScalar, isSeq, parseDocument, type Document } from "yaml";

/** A path into a value: `["models", "local", "price", "input"]`, `["tools", 1]`. */
export type KeyPath = readonly (string | number)[];

/** `models.local.price.input`, `subscribers[0].url`. */
export function formatKeyPath(path: KeyPath): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else out += out === "" ? segment : `.${segment}`;
  }
  return out;
}

const MARKER = Symbol.for("wardrik.config_error");

/** A file or body that cannot be used. The message reads `file:line: what is wrong`. */
export class ConfigError extends Error {
  readonly [MARKER] = true;
  /** Relative to the project directory (`agents/triage.md`), or a label such as `request body`. */
  readonly file: string;
  /** 1-based line in `file`; absent for JSON input. */
  readonly line: number | undefined;
  /** The offending key path, e.g. `models.local.price.input`. */
  readonly key: string | undefined;
  /** The message without its `file:line: ` prefix. */
  readonly detail: string;

  constructor(init: { file: string; line?: number | undefined; key?: string | undefined; detail: string }) {
    super(`${init.file}${init.line === undefined ? "" : `:${init.line}`}: ${init.detail}`);
    this.name = "ConfigError";
    this.file = init.file;
    this.line = init.line;
    this.key = init.key;
    this.detail = init.detail;
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
    private readonly locate: (path: KeyPath) => number | undefined = () => undefined,
  ) {}

  /** 1-based line of the key (or list item) at `path`, or of its deepest existing parent. */
  lineOf(path: KeyPath): number | undefined {
    return this.locate(path);
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
    throw new ConfigError({ file, line: lineAt(syntax.pos[0]), detail: `invalid YAML: ${syntax.message}` });
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    throw new ConfigError({ file, line: rootLine, detail: `invalid YAML: ${(error as Error).message}` });
  }
  return new Source(file, value, (path) => locate(doc, path, lineAt, rootLine));
}

/** A Source over plain data (a JSON body): errors name the key but no line. */
export function plainSource(value: unknown, where: string): Source {
  return new Source(where, value);
}

function locate(doc: Document, path: KeyPath, lineAt: (offset: number) => number, rootLine: number): number {
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
  return line;
}

// Typed reads. Each takes the value at `path` and fails with the path and its line.

function describe(path: KeyPath): string {
  return path.length === 0 ? "the top level" : formatKeyPath(path);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A mapping; with `allowed`, any other key is an error at that key's line. */
export function readMap(src: Source, path: KeyPath, value: unknown, allowed?: readonly string[]): Record<string, unknown> {
  if (!isPlainObject(value)) return src.fail(path, `${describe(path)} must be a mapping`);
  if (allowed !== undefined) {
    for (const key of Object.keys(value)) {
      if (!allowed.includes(key)) {
        const at = [...path, key];
        src.fail(at, `key "${formatKeyPath(at)}" is not allowed (allowed: ${allowed.join(", ")})`);
      }
    }
  }
  return value;
}

/** The value of a required key; a missing key is reported at its parent's line. */
export function readRequired(src: Source, path: KeyPath, map: Record<string, unknown>, key: string): unknown {
  const value = map[key];
  if (value === undefined || value === null) {
    return src.fail([...path, key], `key "${formatKeyPath([...path, key])}" is required`, path);
  }
  return value;
}

export function readString(src: Source, path: KeyPath, value: unknown, options: { allowEmpty?: boolean } = {}): string {
  if (typeof value !== "string") return src.fail(path, `${describe(path)} must be a string`);
  if (value === "" && options.allowEmpty !== true) return src.fail(path, `${describe(path)} must not be empty`);
  return value;
}

export function readList(src: Source, path: KeyPath, value: unknown): unknown[] {
  if (!Array.isArray(value)) return src.fail(path, `${describe(path)} must be a list`);
  return value;
}

export function readStringList(src: Source, path: KeyPath, value: unknown): string[] {
  return readList(src, path, value).map((item, i) => readString(src, [...path, i], item));
}

const NUMBER_KINDS = {
  "a number >= 0": (n: number) => n >= 0,
  "a positive number": (n: number) => n > 0,
  "an integer >= 0": (n: number) => Number.isInteger(n) && n >= 0,
  "a positive integer": (n: number) => Number.isInteger(n) && n > 0,
} as const;
export type NumberKind = keyof typeof NUMBER_KINDS;

export function readNumber(src: Source, path: KeyPath, value: unknown, kind: NumberKind): number {
  if (typeof value !== "number" || !Number.isFinite(value)) return src.fail(path, `${describe(path)} must be a number`);
  if (!NUMBER_KINDS[kind](value)) return src.fail(path, `${describe(path)} must be ${kind}`);
  return value;
}
