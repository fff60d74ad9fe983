import { posix } from "node:path";
import { findUnsafeCharacter } from "@wardrik/protocol";
import type { Db, Tx } from "../store/db.js";
import { FilesTable } from "../store/files.js";
import type { Clock } from "../ids.js";
import type { ToolCallContext, ToolInfo, ToolOutcome, ToolScope, Toolset } from "./toolset.js";

const MAX_FILE_BYTES = 1_000_000;
const MAX_PATH = 512;
const MAX_LIST = 1000;
const MAX_SEARCH_HITS = 50;

const pathSchema = { type: "string", description: "Path inside the agent's file space, such as notes/today.md" };

const TOOLS: ToolInfo[] = [
  {
    name: "files/read",
    description: "Read a file from your file space.",
    inputSchema: obj({ path: pathSchema }, ["path"]),
    readOnly: true,
    idempotent: true,
  },
  {
    name: "files/write",
    description: "Create or replace a file in your file space.",
    inputSchema: obj({ path: pathSchema, content: { type: "string", description: "The whole new content of the file" } }, [
      "path",
      "content",
    ]),
    readOnly: false,
    idempotent: true,
  },
  {
    name: "files/list",
    description: "List files in your file space, optionally only those under a prefix.",
    inputSchema: obj({ prefix: { type: "string", description: "Only paths that start with this, such as notes/" } }, []),
    readOnly: true,
    idempotent: true,
  },
  {
    name: "files/search",
    description: "Find files whose path or content contains the query (case-insensitive); returns matching lines.",
    inputSchema: obj({ query: { type: "string", description: "Text to look for" } }, ["query"]),
    readOnly: true,
    idempotent: true,
  },
  {
    name: "files/delete",
    description: "Delete a file from your file space.",
    inputSchema: obj({ path: pathSchema }, ["path"]),
    readOnly: false,
    idempotent: true,
  },
];

function obj(properties: Record<string, unknown>, required: string[]): Record<string, unknown> {
  return { type: "object", properties, required, additionalProperties: false };
}

class FileError extends Error {}

/**
 * Normalises a path inside an agent's space, refusing anything that would
 * leave it: absolute paths, `..` above the root, NUL bytes, backslashes.
 */
export function normaliseFilePath(raw: unknown): string {
  if (typeof raw !== "string" || raw.trim() === "") throw new FileError("path must be a non-empty string, such as notes/today.md");
  if (raw.length > MAX_PATH) throw new FileError(`path is longer than ${MAX_PATH} characters`);
  const unsafe = findUnsafeCharacter(raw);
  // A path people read back must show what it is: no control characters, no bidirectional overrides.
  if (unsafe) throw new FileError(`path must not contain ${unsafe.codePoint} (${unsafe.name}); it has one at character ${unsafe.position}`);
  if (raw.includes("\\")) throw new FileError(`path "${raw}" must use / as separator`);
  if (raw.startsWith("/") || raw.startsWith("~"))
    throw new FileError(`path "${raw}" must be relative to your file space, such as notes/today.md`);
  const norm = posix.normalize(raw);
  if (norm === ".." || norm.startsWith("../")) throw new FileError(`path "${raw}" leaves your file space; paths cannot go above its root`);
  if (norm === "." || norm.endsWith("/")) throw new FileError(`path "${raw}" names a folder, not a file`);
  return norm;
}

/**
 * The built-in `files` namespace: a private file space per agent, stored in
 * the database. Every call runs inside the transaction that stores its
 * result, so a write and its result commit together: after a crash a write
 * either happened and is on the record, or did not happen at all.
 */
export class FilesToolset implements Toolset {
  readonly namespace = "files";
  readonly kind = "files" as const;
  private readonly files = new FilesTable();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  list(_scope: ToolScope): ToolInfo[] {
    return TOOLS;
  }

  call(tool: string, args: unknown, ctx: ToolCallContext): Promise<ToolOutcome> {
    return this.db.transaction((tx) => this.callInTransaction(tx, tool, args, ctx));
  }

  async callInTransaction(tx: Tx, tool: string, args: unknown, ctx: ToolCallContext): Promise<ToolOutcome> {
    try {
      const a = (args ?? {}) as Record<string, unknown>;
      if (typeof a !== "object" || Array.isArray(a)) throw new FileError("arguments must be an object");
      return { ok: true, output: await this.run(tx, tool, a, ctx.agent) };
    } catch (err) {
      if (err instanceof FileError) return { ok: false, kind: "failed", error: err.message };
      throw err;
    }
  }

  private async run(tx: Tx, tool: string, a: Record<string, unknown>, agent: string): Promise<unknown> {
    switch (tool) {
      case "read": {
        const path = normaliseFilePath(a.path);
        const content = await this.files.read(tx, agent, path);
        if (content === undefined) throw new FileError(`No file ${path}. Use files__list to see which files exist.`);
        return { path, content };
      }
      case "write": {
        const path = normaliseFilePath(a.path);
        if (typeof a.content !== "string") throw new FileError("content must be a string");
        if (a.content.includes("\u0000"))
          throw new FileError(`content must not contain NUL characters (first at character ${a.content.indexOf("\u0000") + 1})`);
        const bytes = Buffer.byteLength(a.content);
        if (bytes > MAX_FILE_BYTES) throw new FileError(`content is ${bytes} bytes; a file holds at most ${MAX_FILE_BYTES}`);
        await this.files.write(tx, agent, path, a.content, this.clock.now().toISOString());
        return { path, bytes };
      }
      case "list": {
        const prefix = a.prefix === undefined ? "" : String(a.prefix);
        const rows = await this.files.list(tx, agent, prefix, MAX_LIST + 1);
        const files = rows.slice(0, MAX_LIST).map((r) => ({ path: r.path, size: r.size, updated_at: r.updated_at }));
        return rows.length > MAX_LIST ? { files, truncated: true } : { files };
      }
      case "search": {
        if (typeof a.query !== "string" || a.query === "") throw new FileError("query must be a non-empty string");
        const q = a.query.toLowerCase();
        const hits: { path: string; line?: number; text?: string }[] = [];
        for (const r of await this.files.all(tx, agent)) {
          if (hits.length >= MAX_SEARCH_HITS) break;
          if (r.path.toLowerCase().includes(q)) hits.push({ path: r.path });
          const lines = r.content.split("\n");
          for (let i = 0; i < lines.length && hits.length < MAX_SEARCH_HITS; i++) {
            if (lines[i]!.toLowerCase().includes(q)) hits.push({ path: r.path, line: i + 1, text: lines[i]!.slice(0, 300) });
          }
        }
        return { query: a.query, hits };
      }
      case "delete": {
        const path = normaliseFilePath(a.path);
        return { path, deleted: await this.files.delete(tx, agent, path) };
      }
      default:
        throw new FileError(`files has no tool "${tool}"; it has read, write, list, search and delete`);
    }
  }
}
