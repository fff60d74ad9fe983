/**
 * The one client, as the CLI and the web console use it: `@wardrik/sdk/client`
 * imports no node: module (so a browser bundle can hold it), requests may go
 * through another transport (the CLI's node:http), every POST carries an
 * Idempotency-Key kept across its retries, the admin token acts in another
 * org with Wardrik-Org, and an event stream reports whether it is connected.
 */
import { readFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { builtinModules } from "node:module";
import type { AddressInfo } from "node:net";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetchTransport, WardrikClient, type Transport } from "../src/client-entry.js";

// The built files (types erased): what a bundler takes.
const SDK_DIST = fileURLToPath(new URL("../dist/", import.meta.url));
const PROTOCOL_DIST = fileURLToPath(new URL("../../protocol/dist/", import.meta.url));

/** Every module specifier `file` imports, statically or with import(). */
function importsOf(file: string): string[] {
  return [...readFileSync(file, "utf8").matchAll(/(?:from|import)\s*\(?\s*"([^"]+)"/g)].map((m) => m[1]!);
}

/** The module graph under `entry`, through relative imports and @wardrik/protocol entries: each file with what it imports. */
function graphOf(entry: string): Map<string, string[]> {
  const seen = new Map<string, string[]>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    const specifiers = importsOf(file);
    seen.set(file, specifiers);
    for (const s of specifiers) {
      if (s.startsWith(".")) visit(resolve(dirname(file), s));
      else if (s === "@wardrik/protocol/errors") visit(join(PROTOCOL_DIST, "errors.js"));
    }
  };
  visit(entry);
  return seen;
}

describe("@wardrik/sdk/client is browser-safe", () => {
  it("no module under the entry imports a node: module or Node's built-ins, nor the zod half of the protocol", () => {
    const graph = graphOf(join(SDK_DIST, "client-entry.js"));
    expect([...graph.keys()].map((f) => f.replace(/.*\/packages\//, ""))).toEqual(
      expect.arrayContaining(["sdk/dist/client.js", "sdk/dist/client-core.js", "sdk/dist/sse.js", "protocol/dist/errors.js"]),
    );
    const node = new Set(builtinModules);
    const bad = [...graph].flatMap(([file, specifiers]) =>
      specifiers.filter((s) => s.startsWith("node:") || node.has(s) || s === "@wardrik/protocol").map((s) => `${file}: ${s}`),
    );
    expect(bad).toEqual([]);
  });

  it("the package exports it as ./client", () => {
    const pkg = JSON.parse(readFileSync(join(SDK_DIST, "..", "package.json"), "utf8")) as { exports: Record<string, { default: string }> };
    expect(pkg.exports["./client"]?.default).toBe("./dist/client-entry.js");
  });
});

let server: Server;
let url: string;
const seen: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[] = [];
let failNextPosts = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      if (req.url?.startsWith("/v1/events/stream")) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(`id: c1\nevent: event\ndata: ${JSON.stringify({ seq: 1, type: "wardrik.turn.started", cursor: "c1" })}\n\n`);
        return;
      }
      if (req.method === "POST" && failNextPosts > 0) {
        failNextPosts--;
        res.writeHead(503, { "content-type": "application/problem+json" });
        res.end(JSON.stringify({ status: 503, detail: "Starting.", code: "unavailable", retryable: true }));
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(req.url?.startsWith("/v1/agents?") ? JSON.stringify({ agents: [{ name: "a" }], next: null }) : '{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe("requests", () => {
  it("go through the transport given, with the token and the org the admin token acts in", async () => {
    const used: string[] = [];
    const transport: Transport = (request) => {
      used.push(`${request.method} ${request.url}`);
      return fetchTransport(request);
    };
    const client = new WardrikClient({ url, token: "adm", transport }).inOrg("acme");
    expect(await client.listAgents()).toEqual([{ name: "a" }]);
    expect(used).toEqual([`GET ${url}/v1/agents?limit=1000`]);
    expect(seen.at(-1)!.headers).toMatchObject({ authorization: "Bearer adm", "wardrik-org": "acme" });
  });

  it("a POST carries an Idempotency-Key, the same on each retry until its deadline; a token's creation carries none", async () => {
    const client = new WardrikClient({ url, token: "t" });
    const retries: number[] = [];
    client.onRetry = (attempt) => retries.push(attempt);
    failNextPosts = 2;
    const from = seen.length;
    await client.sendMessage("agt_1", "hi", "main", { deadline: Date.now() + 30_000 });
    const posts = seen.slice(from);
    expect(posts).toHaveLength(3);
    expect(retries).toEqual([1, 2]);
    const keys = new Set(posts.map((p) => p.headers["idempotency-key"]));
    expect(keys.size).toBe(1);
    expect([...keys][0]).toMatch(/^[0-9a-f-]{36}$/);
    await client.createToken("acme");
    expect(seen.at(-1)!.headers).not.toHaveProperty("idempotency-key");
  });

  it("a client with no token sends none (trading a console sign-in code)", async () => {
    await new WardrikClient({ url, token: null }).tradeSignInCode("code");
    expect(seen.at(-1)!.headers).not.toHaveProperty("authorization");
    expect(JSON.parse(seen.at(-1)!.body)).toEqual({ code: "code" });
  });
});

describe("event streams", () => {
  it("say when they are live, and resume after the last event's id", async () => {
    const client = new WardrikClient({ url, token: "t" });
    const ac = new AbortController();
    const states: string[] = [];
    const got: unknown[] = [];
    const from = seen.length;
    for await (const e of client.followOrg({ signal: ac.signal, onState: (s) => states.push(s) })) {
      got.push(e);
      if (got.length === 2) ac.abort();
    }
    expect(got).toEqual([expect.objectContaining({ seq: 1, cursor: "c1" }), expect.objectContaining({ seq: 1 })]);
    expect(states.slice(0, 3)).toEqual(["live", "reconnecting", "live"]);
    const streams = seen.slice(from).filter((s) => s.url.startsWith("/v1/events/stream"));
    expect(streams[0]!.headers).not.toHaveProperty("last-event-id");
    expect(streams[1]!.headers["last-event-id"]).toBe("c1");
  });
});
