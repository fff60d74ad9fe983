// tsc does not copy non-TS files: the SQL migrations travel next to the compiled store.
import { cpSync } from "node:fs";
cpSync("packages/daemon/src/store/migrations", "packages/daemon/dist/store/migrations", { recursive: true });
