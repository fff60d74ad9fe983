/**
 * The web console as the daemon serves it: the page at `/` on the API's port,
 * one-time sign-in links (`wardrik console`, `POST /v1/console/links`) that
 * never carry the token, and `GET /v1/whoami` for the org switch.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { databaseContents, projectDatabaseUrl } from "../helpers/database-contents.js";
import { createProject, waitFor, type TestProject } from "../helpers/spawn-daemon.js";

let p: TestProject;
let acmeToken: string;

beforeAll(async () => {
  p = await createProject();
  acmeToken = (await p.apiOk<{ token: string }>("POST", "/v1/tokens", { org: "acme", name: "console test" })).token;
});

const CODE_URL = /^http:\/\/127\.0\.0\.1:\d+\/#code=([A-Za-z0-9_-]{43})$/;

async function link(token?: string): Promise<{ url: string; code: string; expires_at: string }> {
  const r = await p.api<{ url: string; expires_at: string }>("POST", "/v1/console/links", undefined, token ? { token } : {});
  expect(r.status).toBe(201);
  return { ...r.json, code: CODE_URL.exec(r.json.url)![1]! };
}

async function trade(code: string) {
  return p.api<{ token: string; org: string; admin: boolean; detail?: string }>("POST", "/v1/console/sessions", { code }, { token: null });
}

describe("the page", () => {
  it("GET / serves the console with a policy that lets it load only its own files and talk only to this daemon", async () => {
    const r = await p.api("GET", "/", undefined, { token: null });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(r.headers.get("content-security-policy")).toContain("default-src 'none'; script-src 'self'");
    expect(r.headers.get("content-security-policy")).toContain("connect-src 'self'");
    expect(r.text).toContain("<title>Wardrik</title>");
    expect(r.text).not.toMatch(/https?:\/\//);
    const assets = [...r.text.matchAll(/(?:src|href)="\.?(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets.some((a) => a.endsWith(".js"))).toBe(true);
    for (const a of assets) {
      const file = await p.api("GET", a, undefined, { token: null });
      expect(file.status, a).toBe(200);
      expect(file.headers.get("content-type")).toMatch(/^(text\/javascript|text\/css|image\/svg\+xml)/);
      expect(file.headers.get("cache-control")).toContain("immutable");
    }
  });

  it("unknown paths stay JSON errors, under /v1/ and elsewhere", async () => {
    const api = await p.api<{ code: string; detail: string }>("GET", "/v1/nothing-here");
    expect(api.status).toBe(404);
    expect(api.json.detail).toBe("No route GET /v1/nothing-here. The routes are listed at /v1/openapi.json.");
    expect((await p.api("GET", "/assets/missing.js", undefined, { token: null })).status).toBe(404);
    expect((await p.api("GET", "/elsewhere", undefined, { token: null })).status).toBe(404);
  });
});

describe("sign-in links", () => {
  it("wardrik console prints a link with a code, not the token; the code gives the token once", async () => {
    const r = await p.cli(["console", "--no-open"]);
    expect(r.code).toBe(0);
    const url = r.stdout.trim();
    const code = CODE_URL.exec(url)?.[1];
    expect(code, url).toBeDefined();
    expect(url).not.toContain(p.token);
    expect(r.stderr).toMatch(/The link signs in once, until .+; it holds no token\./);

    const first = await trade(code!);
    expect(first.status).toBe(200);
    expect(first.json).toEqual({ token: p.token, org: "default", admin: true });
    const again = await trade(code!);
    expect(again.status).toBe(401);
    expect(again.json.detail).toMatch(/links work once and for 2 minutes\. Run `wardrik console` for a new one/);
  });

  it("wardrik console --json gives the link and when it expires (about 2 minutes on)", async () => {
    const r = await p.cli(["console", "--no-open", "--json"]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { url: string; expires_at: string; opened: boolean };
    expect(out.url).toMatch(CODE_URL);
    expect(out.opened).toBe(false);
    const inMs = Date.parse(out.expires_at) - Date.now();
    expect(inMs).toBeGreaterThan(60_000);
    expect(inMs).toBeLessThanOrEqual(120_000);
  });

  it("on a desktop, wardrik console opens the link in the browser", async () => {
    const bin = join(p.dir, "fake-bin");
    mkdirSync(bin, { recursive: true });
    const opened = join(p.dir, "opened.txt");
    // Stands in for the desktop's opener (xdg-open), which a test machine has no screen for.
    writeFileSync(join(bin, "xdg-open"), `#!/bin/sh\nprintf '%s' "$1" > ${JSON.stringify(opened)}\n`);
    chmodSync(join(bin, "xdg-open"), 0o755);
    const r = await p.cli(["console"], { env: { DISPLAY: ":99", PATH: `${bin}:${process.env.PATH ?? ""}` } });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("Opened the console in your browser.");
    await waitFor(() => existsSync(opened) && readFileSync(opened, "utf8") !== "", "the opener to run", 10_000);
    expect(readFileSync(opened, "utf8")).toBe(r.stdout.trim());
    // Without a desktop it only prints.
    const plain = await p.cli(["console"], { env: { DISPLAY: undefined, WAYLAND_DISPLAY: undefined } });
    expect(plain.stderr).not.toContain("Opened");
  });

  it("neither the code nor the token is kept in the database, nor in a stored idempotent answer", async () => {
    const made = await p.api<{ url: string }>("POST", "/v1/console/links", undefined, { headers: { "Idempotency-Key": "console-link-1" } });
    const code = CODE_URL.exec(made.json.url)![1]!;
    const again = await p.api<{ url: string }>("POST", "/v1/console/links", undefined, {
      headers: { "Idempotency-Key": "console-link-1" },
    });
    expect(again.json.url).not.toBe(made.json.url);
    const contents = await databaseContents(projectDatabaseUrl(p.dir, p.read("config.yaml")));
    for (const { where, text } of contents) {
      expect(text.includes(code), `the code in ${where}`).toBe(false);
      expect(text.includes(p.token), `the token in ${where}`).toBe(false);
    }
    expect((await trade(code)).json.token).toBe(p.token);
  });

  it("an org token's link signs in to that org only; a made-up code signs in nobody", async () => {
    const { code } = await link(acmeToken);
    expect((await trade(code)).json).toEqual({ token: acmeToken, org: "acme", admin: false });
    const made = await trade("x".repeat(43));
    expect(made.status).toBe(401);
    expect((await p.api("POST", "/v1/console/links", undefined, { token: null })).status).toBe(401);
  });
});

describe("GET /v1/whoami", () => {
  it("the admin token reaches every org the daemon knows and can act in another; an org token only its own", async () => {
    expect(await p.apiOk("GET", "/v1/whoami")).toEqual({ org: "default", admin: true, orgs: ["acme", "default"] });
    const asAcme = await p.api("GET", "/v1/whoami", undefined, { headers: { "Wardrik-Org": "acme" } });
    expect(asAcme.json).toEqual({ org: "acme", admin: true, orgs: ["acme", "default"] });
    const org = await p.api("GET", "/v1/whoami", undefined, { token: acmeToken });
    expect(org.json).toEqual({ org: "acme", admin: false, orgs: ["acme"] });
    const other = await p.api("GET", "/v1/whoami", undefined, { token: acmeToken, headers: { "Wardrik-Org": "default" } });
    expect(other.status).toBe(403);
  });
});
