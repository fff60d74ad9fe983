// tsc does not copy non-TS files: the SQL migrations, one folder per dialect,
// travel next to the compiled store. The old copy goes first, so a renamed or
// moved migration never lingers in dist/.
import { cpSync, existsSync, rmSync } from "node:fs";

const from = "packages/daemon/src/store/migrations";
const to = "packages/daemon/dist/store/migrations";
rmSync(to, { recursive: true, force: true });
cpSync(from, to, { recursive: true });
for (const dialect of ["sqlite", "postgres"]) {
  if (!existsSync(`${to}/${dialect}`)) throw new Error(`${from}/${dialect} is missing: every dialect needs its migrations.`);
}
