/**
 * The source modules behind the chunks a process loaded. bin/wardrik.js runs
 * the bundle (dist/bundle/, scripts/bundle-daemon.mjs), so a recorded module
 * list names chunks; esbuild's metafile (dist/bundle/meta.json) says which
 * built modules (dist/..., the @wardrik/* packages' dist/, hono) each chunk
 * holds. Replacing each chunk by those modules gives the list the unbundled
 * CLI would have loaded, and the tests' rules about what a command may load
 * hold on it.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { DAEMON_PKG } from "./spawn-daemon.js";

interface Metafile {
  outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }>;
}

const BUNDLE_DIR = join(DAEMON_PKG, "dist", "bundle");
let meta: Metafile | undefined;

/** Whether `url` is a file of the bundle. */
export function inBundle(url: string): boolean {
  return url.startsWith(pathToFileURL(BUNDLE_DIR).href + "/");
}

/**
 * `modules` (URLs, as the recorder writes them) with every chunk of the bundle
 * replaced by the file URLs of the modules it holds (paths in the metafile are
 * relative to packages/daemon, where the build ran). A chunk the metafile does
 * not know is an error: a stale bundle or metafile.
 */
export function sourceModules(modules: string[]): string[] {
  meta ??= JSON.parse(readFileSync(join(BUNDLE_DIR, "meta.json"), "utf8")) as Metafile;
  const out: string[] = [];
  for (const m of modules) {
    if (!inBundle(m)) {
      out.push(m);
      continue;
    }
    const key = fileURLToPath(m).slice(DAEMON_PKG.length).replace(/\\/g, "/").replace(/^\//, "");
    const chunk = meta.outputs[key];
    if (!chunk) throw new Error(`${key} is not in dist/bundle/meta.json: run \`npm run build\`.`);
    for (const input of Object.keys(chunk.inputs)) out.push(pathToFileURL(join(DAEMON_PKG, input)).href);
  }
  return [...new Set(out)];
}
