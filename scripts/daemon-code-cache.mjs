// `node scripts/daemon-code-cache.mjs DAEMON_CJS` (run by bundle-daemon.mjs): requires the bundle's daemon.cjs as
// `wardrik daemon` does (src/cli/code-cache.ts), starts a daemon in a project as `wardrik init` makes it (its
// config.yaml, policies and agents read as every start reads them) and stops it, then writes what V8 compiled of the
// file meanwhile to daemon.cjs.cache. Plain `node`, no flags: V8 refuses a cache made under other flags.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { requireWithCodeCache, writeCodeCache } from "../packages/daemon/dist/cli/code-cache.js";
import { initProject } from "../packages/daemon/dist/cli/init-project.js";

const file = process.argv[2];
const { exports: daemon, script } = requireWithCodeCache(file);
const dir = mkdtempSync(join(tmpdir(), "wardrik-code-cache-"));
try {
  const project = initProject(join(dir, "project")).dir;
  const started = await daemon.startDaemon(project, { log: () => undefined, port: 0 });
  await started.close();
  writeCodeCache(file, script);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
