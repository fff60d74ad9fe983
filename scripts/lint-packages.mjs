// `npm run lint:packages` (part of `npm run lint`, after `npm run build`): what
// each public package would publish. publint finds nothing, not even a
// suggestion; the tarball holds a README and a LICENSE; package.json names the
// Node versions it runs on (engines.node).
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { publint } from "publint";
import { formatMessage } from "publint/utils";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const PUBLIC_PACKAGES = ["packages/protocol", "packages/sdk", "packages/testing", "packages/daemon"];
const REQUIRED_FILES = ["README.md", "LICENSE", "package.json"];

const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const listed = promisify(execFile)(npm, ["pack", "--dry-run", "--json", ...PUBLIC_PACKAGES.flatMap((p) => ["--workspace", p])], {
  cwd: root,
  maxBuffer: 64 * 1024 * 1024,
}).then(({ stdout }) => JSON.parse(stdout));

const problems = [];
const linted = PUBLIC_PACKAGES.map(async (dir) => {
  const pkgDir = join(root, dir);
  const result = await publint({ pkgDir, pack: "npm", level: "suggestion", strict: true });
  for (const m of result.messages) problems.push(`${dir}: publint ${m.type}: ${formatMessage(m, result.pkg) ?? m.code}`);
  const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
  if (typeof pkg.engines?.node !== "string") problems.push(`${dir}/package.json: no engines.node (the Node versions it runs on)`);
});
await Promise.all(linted);
for (const tarball of await listed) {
  const files = new Set(tarball.files.map((f) => f.path));
  for (const f of REQUIRED_FILES) if (!files.has(f)) problems.push(`${tarball.name}: the tarball has no ${f}`);
}
if (problems.length > 0) {
  console.error(problems.join("\n"));
  process.exit(1);
}
console.log(`lint:packages: ${PUBLIC_PACKAGES.length} packages publish cleanly (publint, README, LICENSE, engines).`);
