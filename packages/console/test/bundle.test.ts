/**
 * The console `npm run build` writes into the daemon's dist/console: small
 * enough to load at once on a slow link (the issue asks for under 200 KB
 * gzipped), and made only of files the daemon serves itself.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { expect, it } from "vitest";

const DIR = fileURLToPath(new URL("../../daemon/dist/console/", import.meta.url));
const SRC = fileURLToPath(new URL("../src/", import.meta.url));

it("the whole built console (page, scripts, styles, icon) is under 200 KB gzipped", () => {
  const names = ["index.html", ...readdirSync(join(DIR, "assets")).map((n) => `assets/${n}`)];
  expect(names.some((n) => n.endsWith(".js"))).toBe(true);
  const gzipped = names.reduce((sum, n) => sum + gzipSync(readFileSync(join(DIR, n)), { level: 9 }).length, 0);
  expect(gzipped).toBeLessThan(200 * 1024);
});

it("the page loads only its own files: no CDN, no font or script from elsewhere", () => {
  const html = readFileSync(join(DIR, "index.html"), "utf8");
  expect(html).not.toMatch(/(?:src|href)="(?:https?:)?\/\//);
  const css = readdirSync(join(DIR, "assets")).filter((n) => n.endsWith(".css"));
  for (const n of css) expect(readFileSync(join(DIR, "assets", n), "utf8")).not.toMatch(/url\(\s*["']?(?:https?:)?\/\//);
});

it("the page takes only plain functions from @wardrik/protocol, not its zod schemas (the package has no side effects)", () => {
  const scripts = readdirSync(join(DIR, "assets")).filter((n) => n.endsWith(".js"));
  for (const n of scripts) expect(readFileSync(join(DIR, "assets", n), "utf8")).not.toMatch(/\$?ZodType|ZodError/);
});

it("the bundle holds no node: module, nor vite's stand-in for one (the SDK's client entry is browser-safe)", () => {
  const scripts = readdirSync(join(DIR, "assets")).filter((n) => n.endsWith(".js"));
  for (const n of scripts) expect(readFileSync(join(DIR, "assets", n), "utf8")).not.toMatch(/["']node:|__vite-browser-external/);
});

it("every request and event stream of the page goes through @wardrik/sdk's client: no fetch or stream reader of its own", () => {
  const files = readdirSync(SRC, { recursive: true, encoding: "utf8" }).filter((n) => /\.tsx?$/.test(n));
  const own = files.filter((n) => /\bfetch\(|EventSource|XMLHttpRequest|getReader\(|TextDecoder/.test(readFileSync(join(SRC, n), "utf8")));
  expect(own).toEqual([]);
  expect(readFileSync(join(SRC, "client", "api.ts"), "utf8")).toMatch(/from "@wardrik\/sdk\/client"/);
  // The client in the bundle is the SDK's (its own words), and edited arguments are checked with the protocol's check.
  const bundle = readdirSync(join(DIR, "assets"))
    .filter((n) => n.endsWith(".js"))
    .map((n) => readFileSync(join(DIR, "assets", n), "utf8"))
    .join("\n");
  expect(bundle).toContain("The daemon URL names no address");
  expect(bundle).toContain("so edited arguments cannot be checked against its schema");
});
