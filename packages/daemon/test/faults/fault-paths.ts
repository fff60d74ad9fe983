/** Where the fault kit finds the repository, the built `wardrik` binary and the fault worker. No vitest here. */
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
export const BIN = join(REPO_ROOT, "packages", "daemon", "bin", "wardrik.js");
export const WORKER_FIXTURE = fileURLToPath(new URL("./fixtures/fault-worker.ts", import.meta.url));
