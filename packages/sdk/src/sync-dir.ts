import { open } from "node:fs/promises";

/** Makes a rename (or a new file) durable on filesystems that need the directory synced; harmless where they don't. */
export async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await open(dir, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Some platforms (Windows) cannot open a directory; the rename is still atomic there.
  }
}
