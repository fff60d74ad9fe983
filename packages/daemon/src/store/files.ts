import type { Tx } from "./db.js";

export interface FileEntry {
  path: string;
  size: number;
  updated_at: string;
}

/** Each agent's private file space (the built-in files tool). Writes take the caller's transaction. */
export class FilesTable {
  async read(tx: Tx, agentId: string, path: string): Promise<string | undefined> {
    return (await tx.get<{ content: string }>("SELECT content FROM files WHERE agent_id = ? AND path = ?", [agentId, path]))?.content;
  }

  async write(tx: Tx, agentId: string, path: string, content: string, now: string): Promise<void> {
    await tx.run(
      "INSERT INTO files (agent_id, path, content, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (agent_id, path) DO UPDATE SET content = excluded.content, updated_at = excluded.updated_at",
      [agentId, path, content, now],
    );
  }

  /** Up to `limit` files whose path starts with `prefix`, by path. */
  list(tx: Tx, agentId: string, prefix: string, limit: number): Promise<FileEntry[]> {
    return tx.all<{ path: string; size: number; updated_at: string }>(
      "SELECT path, LENGTH(content) AS size, updated_at FROM files WHERE agent_id = ? AND substr(path, 1, ?) = ? ORDER BY path LIMIT ?",
      [agentId, prefix.length, prefix, limit],
    );
  }

  all(tx: Tx, agentId: string): Promise<{ path: string; content: string }[]> {
    return tx.all<{ path: string; content: string }>("SELECT path, content FROM files WHERE agent_id = ? ORDER BY path", [agentId]);
  }

  async delete(tx: Tx, agentId: string, path: string): Promise<boolean> {
    return (await tx.run("DELETE FROM files WHERE agent_id = ? AND path = ?", [agentId, path])).changes > 0;
  }
}
