import { existsSync, readFileSync, readdirSync } from "node:fs";
import { extname, join } from "node:path";
import type { Context, Hono } from "hono";
import { WardrikError } from "@wardrik/protocol";
import type { ApiEnv } from "./api-env.js";
import { errorResponse } from "./http-errors.js";
import { PACKAGE_DIR } from "../package-dir.js";

/** Where `npm run build` puts the console (packages/console builds into the daemon's dist/); the same from src/, dist/ and the bundle. */
export const CONSOLE_DIR = join(PACKAGE_DIR, "dist", "console");

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2",
  ".json": "application/json",
};

/**
 * The page may load only its own files and talk only to this daemon: no CDN,
 * no inline script, nothing framed. The console reaches the API like any client.
 */
const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

/**
 * Serves the web console at `/` (index.html) and its hashed files at
 * `/assets/...`. The files are read once, at the first request: they are a
 * few hundred kilobytes and never change while the daemon runs.
 */
export function serveConsole(app: Hono<ApiEnv>, dir = CONSOLE_DIR): void {
  let files: Map<string, Buffer> | undefined;
  const load = () => (files ??= readConsole(dir));

  const send = (c: Context<ApiEnv>, name: string, cache: string) => {
    const body = load().get(name);
    if (body === undefined) {
      const why =
        name === "index.html"
          ? "The web console is not part of this build; run `npm run build` in the checkout."
          : `No file ${c.req.path}.`;
      return errorResponse(c, new WardrikError("not_found", why));
    }
    const headers = { "content-type": TYPES[extname(name)] ?? "application/octet-stream", "cache-control": cache, ...SECURITY_HEADERS };
    return c.req.method === "HEAD" ? c.body(null, 200, headers) : c.body(new Uint8Array(body), 200, headers);
  };

  app.on(["GET", "HEAD"], "/", (c) => send(c, "index.html", "no-cache"));
  // Asset names carry a hash of their content: a new build gives new names, so browsers may keep them.
  app.on(["GET", "HEAD"], "/assets/:file{[A-Za-z0-9._-]+}", (c) =>
    send(c, `assets/${c.req.param("file")}`, "public, max-age=31536000, immutable"),
  );
}

function readConsole(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  if (!existsSync(join(dir, "index.html"))) return files;
  files.set("index.html", readFileSync(join(dir, "index.html")));
  const assets = join(dir, "assets");
  if (existsSync(assets)) for (const name of readdirSync(assets)) files.set(`assets/${name}`, readFileSync(join(assets, name)));
  return files;
}
