/**
 * The tarballs `npm run pack` writes are clean: a LICENSE each, no build
 * leftovers, source maps that point at shipped sources (or carry them), types that resolve
 * under moduleResolution node16 and bundler (@arethetypeswrong/cli), nothing
 * publint objects to, zod as a peer of the packages that expose its types,
 * and one version for all of them.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createRequire } from "node:module";
import { publint } from "publint";
import { formatMessage } from "publint/utils";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { REPO_ROOT, assertBuilt, exec, filesUnder, packAll, readJson, unpack, type Packed } from "./pack-helpers.js";

const require = createRequire(import.meta.url);
const ATTW = join(dirname(require.resolve("@arethetypeswrong/cli/package.json")), "dist", "index.js");
const NAMES = ["@wardrik/protocol", "@wardrik/sdk", "@wardrik/testing", "wardrik"];

let tmp: string;
let packed: Packed[];
const unpacked = new Map<string, string>();

beforeAll(async () => {
  assertBuilt();
  tmp = mkdtempSync(join(tmpdir(), "wardrik-packed-"));
  packed = await packAll(join(tmp, "dist"));
  for (const p of packed) unpacked.set(p.name, await unpack(p.file, join(tmp, "unpacked", p.name)));
}, 120_000);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

test("npm run pack writes one tarball per public package, all of one version", () => {
  expect(packed.map((p) => p.name).sort()).toEqual([...NAMES].sort());
  const version = readJson<{ version: string }>(join(REPO_ROOT, "packages", "daemon", "package.json")).version;
  expect(new Set(packed.map((p) => p.version))).toEqual(new Set([version]));
  // The CLI installs the SDK of its own version, so their versions move together.
  const daemon = readJson<{ dependencies: Record<string, string> }>(join(unpacked.get("wardrik")!, "package.json"));
  expect(daemon.dependencies["@wardrik/sdk"]).toBe(version);
  expect(daemon.dependencies["@wardrik/protocol"]).toBe(version);
});

describe.each(NAMES)("%s", (name) => {
  test("has a LICENSE and no build leftovers; every source map points at files in the tarball", () => {
    const dir = unpacked.get(name)!;
    const files = filesUnder(dir);
    expect(files).toContain("LICENSE");
    expect(readFileSync(join(dir, "LICENSE"), "utf8")).toContain("Apache License");
    expect(files.filter((f) => f.includes("tsbuildinfo"))).toEqual([]);
    expect(files.filter((f) => /\.test(-d)?\.ts$/.test(f))).toEqual([]);
    const maps = files.filter((f) => f.endsWith(".map"));
    expect(maps.length).toBeGreaterThan(0);
    const missing: string[] = [];
    for (const map of maps) {
      // The CLI's bundle (dist/bundle/) carries the text of the other packages' sources it holds instead.
      const { sources, sourcesContent } = readJson<{ sources: string[]; sourcesContent?: (string | null)[] }>(join(dir, map));
      for (const [i, source] of sources.entries()) {
        const target = join(dirname(map), source);
        if (!files.includes(target) && typeof sourcesContent?.[i] !== "string") missing.push(`${map} -> ${target}`);
      }
    }
    expect(missing).toEqual([]);
  });

  test("has its README and the Node versions it runs on (engines)", () => {
    const dir = unpacked.get(name)!;
    expect(readFileSync(join(dir, "README.md"), "utf8")).toMatch(new RegExp(`^# ${name.replace("/", "\\/")}\n`));
    expect(readJson<{ engines?: { node?: string } }>(join(dir, "package.json")).engines?.node).toBe(">=20");
  });

  test("publint finds nothing, not even a suggestion", async () => {
    const bytes = readFileSync(packed.find((p) => p.name === name)!.file);
    const tarball = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    const result = await publint({ pack: { tarball }, level: "suggestion", strict: true });
    expect(result.messages.map((m) => `${m.type}: ${formatMessage(m, result.pkg) ?? m.code}`)).toEqual([]);
  });

  test("types resolve under node16 (ESM) and bundler (@arethetypeswrong/cli)", async () => {
    const file = packed.find((p) => p.name === name)!.file;
    // esm-only: the packages are ESM; CommonJS callers use import(), so node16-from-CJS and node10 are not judged.
    const r = await exec(process.execPath, [ATTW, file, "--profile", "esm-only", "--format", "json"], { cwd: tmp }).catch((err: Error) => ({
      code: 1,
      stdout: err.message,
      stderr: "",
    }));
    expect(r.code, r.stdout).toBe(0);
    const report = JSON.parse(r.stdout) as { analysis: { entrypoints: Record<string, { resolutions: Record<string, unknown> }> } };
    // Every entry point of the exports map was analysed.
    const exportsMap = readJson<{ exports: Record<string, unknown> }>(join(unpacked.get(name)!, "package.json")).exports;
    expect(Object.keys(report.analysis.entrypoints).sort()).toEqual(Object.keys(exportsMap).sort());
  });
});

test("@wardrik/protocol ships the JSON Schemas a project's files name in its node_modules", () => {
  for (const kind of ["config", "agent", "policy"])
    expect(readFileSync(join(unpacked.get("@wardrik/protocol")!, "schemas", `${kind}.json`), "utf8")).toBe(
      readFileSync(join(unpacked.get("wardrik")!, "schemas", `${kind}.json`), "utf8"),
    );
});

test("zod is a peer (covering zod 4) of the packages whose types expose it, and never a dependency", () => {
  for (const name of ["@wardrik/protocol", "@wardrik/sdk", "@wardrik/testing"]) {
    const pkg = readJson<{ dependencies?: Record<string, string>; peerDependencies?: Record<string, string> }>(
      join(unpacked.get(name)!, "package.json"),
    );
    expect(pkg.peerDependencies?.zod, name).toBe("^4.0.0");
    expect(pkg.dependencies?.zod, name).toBeUndefined();
  }
});

test("wardrik ships the web console it serves at /: the page and every file it loads, nothing from elsewhere", () => {
  const dir = join(unpacked.get("wardrik")!, "dist", "console");
  const html = readFileSync(join(dir, "index.html"), "utf8");
  const assets = [...html.matchAll(/(?:src|href)="\.\/(assets\/[^"]+)"/g)].map((m) => m[1]!);
  expect(assets.some((a) => a.endsWith(".js"))).toBe(true);
  expect(assets.some((a) => a.endsWith(".css"))).toBe(true);
  const files = filesUnder(dir);
  for (const a of assets) expect(files).toContain(a);
  expect(html).not.toMatch(/(?:src|href)="(?:https?:)?\/\//);
});

test("wardrik's bundle names the licence of every npm package whose code it inlines", () => {
  const bundle = join(unpacked.get("wardrik")!, "dist", "bundle");
  const notice = readFileSync(join(bundle, "THIRD-PARTY-LICENSES.txt"), "utf8");
  const inlined = new Set<string>();
  for (const map of filesUnder(bundle).filter((f) => f.endsWith(".map")))
    for (const source of readJson<{ sources: string[] }>(join(bundle, map)).sources) {
      const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(source);
      if (match) inlined.add(match[1]!);
    }
  expect([...inlined].sort()).toEqual(expect.arrayContaining(["commander", "hono", "yaml", "zod"]));
  for (const name of inlined) expect(notice, name).toMatch(new RegExp(`^${name.replace("/", "\\/")} \\d+\\.\\d+\\.\\d+\\n\\n\\S`, "m"));
  expect(notice).toContain("Permission is hereby granted");
});
