/**
 * The HTTP API as a client sees it: bearer tokens on every /v1 route, JSON
 * errors that say what to fix, body limits, the OpenAPI document, and the
 * server-sent event stream with Last-Event-ID.
 */
import { request, STATUS_CODES } from "node:http";
import type { ProblemDocument } from "@wardrik/protocol";
import { beforeAll, describe, expect, it } from "vitest";
import { agentFile, createProject, readSse, short, type TestProject, type WireEvent } from "../helpers/spawn-daemon.js";

let p: TestProject;
let id: string;

type ErrorBody = ProblemDocument;

interface OpenApiDoc {
  openapi: string;
  info: { title: string; version: string };
  security?: unknown[];
  components: { securitySchemes: Record<string, { type: string; scheme?: string }>; schemas: Record<string, unknown> };
  paths: Record<
    string,
    Record<
      string,
      {
        summary?: string;
        parameters?: { name: string; in: string; required?: boolean }[];
        security?: unknown[];
        requestBody?: unknown;
        responses: Record<string, unknown>;
      }
    >
  >;
}

let doc: OpenApiDoc;

beforeAll(async () => {
  p = await createProject({ files: { "agents/echoer.md": agentFile({ description: "Echoes", model: "script/echo" }) } });
  id = await p.agentId("echoer");
  const r = await p.api<OpenApiDoc>("GET", "/v1/openapi.json", undefined, { token: null });
  doc = r.json;
});

const MISSING_AGENT = "agt_00000000000000000000000000";

/**
 * POST headers that announce a body of `length` bytes on a connection of its own,
 * and wait for the answer before sending any of it: the server can refuse on the
 * declared size alone, with no race between its early answer and our upload.
 */
function postDeclaring(url: string, length: number): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      agent: false,
      method: "POST",
      headers: { authorization: `Bearer ${p.token}`, "content-type": "application/json", "content-length": length },
    });
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (c: string) => (text += c));
      res.on("end", () => {
        resolve({ status: res.statusCode ?? 0, text });
        req.destroy();
      });
    });
    req.on("error", reject);
    req.flushHeaders();
  });
}

/** An error answer is an RFC 9457 problem document: its media type, its members, `code` and `retryable` as extensions. */
function expectError(r: { status: number; json: unknown; headers: Headers }, status: number, code: string): ErrorBody {
  expect(r.status).toBe(status);
  expect(r.headers.get("content-type")).toBe("application/problem+json");
  const body = r.json as ErrorBody;
  expect(Object.keys(body).sort()).toEqual(["code", "detail", "instance", "retryable", "status", "title", "type"]);
  expect(body).toMatchObject({ type: "about:blank", title: STATUS_CODES[status], status, code });
  expect(body.instance).toMatch(/^\/v1\//);
  expect(body.detail.length).toBeGreaterThan(10);
  expect(typeof body.retryable).toBe("boolean");
  return body;
}

describe.concurrent("the OpenAPI document", () => {
  it("is served without a token at /v1/openapi.json as an OpenAPI 3.1 document", () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info.title).toEqual(expect.any(String));
    expect(doc.info.version).toEqual(expect.any(String));
    expect(Object.values(doc.components.securitySchemes)).toContainEqual(expect.objectContaining({ type: "http", scheme: "bearer" }));
  });

  it("lists the routes of the API", () => {
    const routes = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    expect(routes).toEqual(
      expect.arrayContaining([
        "GET /v1/health",
        "GET /v1/agents",
        "GET /v1/agents/{id}",
        "POST /v1/agents/{id}/messages",
        "GET /v1/agents/{id}/conversations",
        "GET /v1/agents/{id}/conversations/{key}/messages",
        "GET /v1/agents/{id}/turns/{run}",
        "POST /v1/agents/{id}/cancel",
        "POST /v1/agents/{id}/clear",
        "GET /v1/agents/{id}/events",
        "GET /v1/agents/{id}/events/stream",
        "POST /v1/reload",
      ]),
    );
  });

  it("is well-formed: every operation has a summary and responses, every {param} is declared, every $ref resolves", () => {
    const methods = new Set(["get", "put", "post", "delete", "patch", "head", "options", "trace"]);
    for (const [path, ops] of Object.entries(doc.paths)) {
      expect(path.startsWith("/")).toBe(true);
      const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      for (const [method, op] of Object.entries(ops)) {
        expect(methods.has(method), `${method} ${path}`).toBe(true);
        expect(op.summary, `${method} ${path}`).toEqual(expect.any(String));
        expect(Object.keys(op.responses).length, `${method} ${path}`).toBeGreaterThan(0);
        const declared = (op.parameters ?? []).filter((x) => x.in === "path");
        expect(declared.map((x) => x.name).sort(), `${method} ${path}`).toEqual([...templated].sort());
        for (const d of declared) expect(d.required).toBe(true);
      }
    }
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!);
    for (const ref of refs) {
      expect(ref.startsWith("#/")).toBe(true);
      const target = ref
        .slice(2)
        .split("/")
        .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key.replace(/~1/g, "/").replace(/~0/g, "~")], doc);
      expect(target, ref).toBeDefined();
    }
  });
});

describe.concurrent("authentication", () => {
  it("every documented /v1 route that is not public answers 401 with a JSON error without a valid token", async () => {
    const ops = Object.entries(doc.paths).flatMap(([path, o]) => Object.entries(o).map(([method, op]) => ({ path, method, op })));
    const guarded = ops.filter(({ op }) => !(Array.isArray(op.security) && op.security.length === 0));
    expect(guarded.length).toBeGreaterThanOrEqual(12);
    for (const { path, method } of guarded) {
      const concrete = path
        .replace("{id}", id)
        .replace("{key}", "main")
        .replace("{run}", "run_00000000000000000000000000")
        .replace("{call}", "call_00000000000000000000000000");
      const body = method === "get" || method === "delete" ? undefined : {};
      for (const token of [null, "wdk_not-the-token"]) {
        const r = await p.api(method.toUpperCase(), concrete, body, { token });
        const e = expectError(r, 401, "unauthorized");
        if (token === null) expect(e.detail, `${method} ${path}`).toMatch(/Bearer/);
      }
    }
  });

  it("a malformed Authorization header is 401 too", async () => {
    const r = await p.api("GET", "/v1/agents", undefined, {
      token: null,
      headers: { authorization: `Basic ${Buffer.from("a:b").toString("base64")}` },
    });
    expectError(r, 401, "unauthorized");
  });

  it("health and the OpenAPI document need no token", async () => {
    expect((await p.api("GET", "/v1/health", undefined, { token: null })).status).toBe(200);
    expect((await p.api("GET", "/v1/openapi.json", undefined, { token: null })).status).toBe(200);
  });
});

describe.concurrent("errors that say what to fix", () => {
  it("an unknown agent ID is 404 with how to find IDs", async () => {
    for (const [method, path, body] of [
      ["GET", `/v1/agents/${MISSING_AGENT}`, undefined],
      ["POST", `/v1/agents/${MISSING_AGENT}/messages`, { text: "hi" }],
      ["GET", `/v1/agents/${MISSING_AGENT}/events`, undefined],
      ["POST", `/v1/agents/${MISSING_AGENT}/cancel`, {}],
    ] as const) {
      const e = expectError(await p.api(method, path, body), 404, "not_found");
      expect(e.detail).toContain(MISSING_AGENT);
      expect(e.detail).toMatch(/GET \/v1\/agents/);
    }
  });

  it("an unknown conversation or turn is 404 naming it", async () => {
    const conv = expectError(await p.api("GET", `/v1/agents/${id}/conversations/nope/messages`), 404, "not_found");
    expect(conv.detail).toMatch(/no conversation nope/);
    const turn = expectError(await p.api("GET", `/v1/agents/${id}/turns/run_00000000000000000000000000`), 404, "not_found");
    expect(turn.detail).toMatch(/no turn run_0+/);
  });

  it("an unknown route is 404 pointing at the OpenAPI document", async () => {
    const e = expectError(await p.api("GET", "/v1/nothing-here"), 404, "not_found");
    expect(e.detail).toMatch(/openapi\.json/);
  });

  it("a body that is not JSON is 400 invalid_json", async () => {
    const e = expectError(
      await p.api("POST", `/v1/agents/${id}/messages`, undefined, { raw: '{"text": "unterminated' }),
      400,
      "invalid_json",
    );
    expect(e.detail).toMatch(/not valid JSON/);
  });

  it("a missing or empty text is 400 naming the field", async () => {
    const missing = expectError(await p.api("POST", `/v1/agents/${id}/messages`, { conversation: "main" }), 400, "bad_request");
    expect(missing.detail).toMatch(/\btext\b/);
    const empty = expectError(await p.api("POST", `/v1/agents/${id}/messages`, { text: "" }), 400, "bad_request");
    expect(empty.detail).toMatch(/\btext\b/);
    const wrongType = expectError(await p.api("POST", `/v1/agents/${id}/messages`, { text: 42 }), 400, "bad_request");
    expect(wrongType.detail).toMatch(/\btext\b/);
    const noBody = expectError(await p.api("POST", `/v1/agents/${id}/messages`), 400, "bad_request");
    expect(noBody.detail).toMatch(/JSON body/);
  });

  it("a body just under the limit is accepted", async () => {
    const text = "y".repeat(900_000);
    const r = await p.api<{ message: string }>("POST", `/v1/agents/${id}/messages`, { text, conversation: "big" });
    expect(r.status).toBe(202);
    expect(r.json.message).toMatch(/^msg_/);
  });

  it("a message to an unreadable agent is refused with the reason", async () => {
    p.write("agents/broken.md", "---\ndescription: x\nbogus: 1\n---\n");
    await p.apiOk("POST", "/v1/reload", {});
    const brokenId = await p.agentId("broken");
    const e = expectError(await p.api("POST", `/v1/agents/${brokenId}/messages`, { text: "hi" }), 409, "unreadable");
    expect(e.detail).toMatch(/agents\/broken\.md:3/);
  });
});

describe("agents made through the API", () => {
  it("are created, answer, and are removed with wardrik agent rm; file agents cannot be removed that way", async () => {
    const bad = expectError(await p.api("POST", "/v1/agents", { name: "api-made", description: "x", colour: "blue" }), 400, "bad_request");
    expect(bad.detail).toMatch(/colour/);

    const created = await p.api<{ id: string; source: string }>("POST", "/v1/agents", {
      name: "api-made",
      description: "Made by API",
      model: "script/echo",
    });
    expect(created.status).toBe(201);
    expect(created.json.source).toBe("api");
    const ask = await p.cli(["ask", "api-made", "hello api"]);
    expect(ask.code, ask.stderr).toBe(0);
    expect(ask.stdout.trim()).toBe("You said: hello api");

    const dup = expectError(
      await p.api("POST", "/v1/agents", { name: "api-made", description: "again", model: "script/echo" }),
      409,
      "conflict",
    );
    expect(dup.detail).toMatch(/already exists/);

    const rmFile = await p.cli(["agent", "rm", "echoer"]);
    expect(rmFile.code).toBe(1);
    expect(rmFile.stderr).toMatch(/delete the file and run wardrik reload/);

    const rm = await p.cli(["agent", "rm", "api-made"]);
    expect(rm.code, rm.stderr).toBe(0);
    expect((await p.api("GET", `/v1/agents/${created.json.id}`)).status).toBe(404);
  });
});

describe("the event stream (server-sent events)", () => {
  it("delivers the backlog and live events, then resumes after Last-Event-ID", async () => {
    const ac = new AbortController();
    const res = await fetch(`${p.url}/v1/agents/${id}/events/stream`, {
      headers: { authorization: `Bearer ${p.token}`, accept: "text/event-stream" },
      signal: ac.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/text\/event-stream/);

    const got: { id: string; event: WireEvent }[] = [];
    const deltas: { run: string; text: string }[] = [];
    let posted: Promise<{ message: string }> | undefined;
    await readSse(res, (f) => {
      if (f.event === "delta") {
        deltas.push(JSON.parse(f.data) as { run: string; text: string });
        return;
      }
      expect(f.event).toBe("event");
      const e = JSON.parse(f.data) as WireEvent;
      expect(f.id).toBe(String(e.seq));
      got.push({ id: f.id!, event: e });
      // Post once the stream is live; its events must arrive on this stream.
      posted ??= p.apiOk<{ message: string }>("POST", `/v1/agents/${id}/messages`, { text: "streamed", conversation: "sse" });
      return short(e.type) === "turn.completed" && e.data.reply === "You said: streamed";
    });
    ac.abort();
    const { message } = await posted!;

    const seqs = got.map((g) => g.event.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect(short(got[0]!.event.type)).toBe("agent.loaded");
    const queued = got.find((g) => short(g.event.type) === "message.queued" && g.event.data.message === message);
    expect(queued).toBeDefined();
    const run = got.at(-1)!.event.run!;
    expect(
      deltas
        .filter((d) => d.run === run)
        .map((d) => d.text)
        .join(""),
    ).toBe("You said: streamed");

    // Reconnect with Last-Event-ID: only what came after it.
    const from = queued!.event.seq;
    const ac2 = new AbortController();
    const res2 = await fetch(`${p.url}/v1/agents/${id}/events/stream`, {
      headers: { authorization: `Bearer ${p.token}`, accept: "text/event-stream", "last-event-id": String(from) },
      signal: ac2.signal,
    });
    const resumed: WireEvent[] = [];
    await readSse(res2, (f) => {
      if (f.event !== "event") return;
      resumed.push(JSON.parse(f.data) as WireEvent);
      return resumed.at(-1)!.seq >= got.at(-1)!.event.seq;
    });
    ac2.abort();
    expect(resumed[0]!.seq).toBe(from + 1);
    expect(resumed.map((e) => e.id)).toEqual(got.filter((g) => g.event.seq > from).map((g) => g.event.id));
  });

  it("?after= works like Last-Event-ID", async () => {
    const ac = new AbortController();
    const res = await fetch(`${p.url}/v1/agents/${id}/events/stream?after=2`, {
      headers: { authorization: `Bearer ${p.token}` },
      signal: ac.signal,
    });
    let first: WireEvent | undefined;
    await readSse(res, (f) => {
      if (f.event !== "event") return;
      first = JSON.parse(f.data) as WireEvent;
      return true;
    });
    ac.abort();
    expect(first!.seq).toBe(3);
  });
});

// Last, and alone: an early 413 can cost a keep-alive connection (see the fetch() case),
// which would break requests of tests running at the same time.
describe("oversized bodies", () => {
  it("a body over 2 MiB is 413 with a JSON error, and the daemon keeps serving", async () => {
    const r = await postDeclaring(`${p.url}/v1/agents/${id}/messages`, 2 * 1024 * 1024 + 16);
    expect(r.status).toBe(413);
    const e = JSON.parse(r.text) as ErrorBody;
    expect(e.code).toBe("body_too_large");
    expect(e.detail).toMatch(/2097152|2 MiB/);
    // Nothing was queued, and the next request is served.
    const events = await p.events(id);
    expect(events.some((x) => short(x.type) === "message.queued" && String(x.data.text).length > 2 * 1024 * 1024)).toBe(false);
    expect((await p.api("GET", "/v1/agents")).status).toBe(200);
  });

  it("a chunked body (no Content-Length) is counted as it comes: over 2 MiB is 413, a small one is read", async () => {
    const chunked = (body: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request(`${p.url}/v1/agents/${id}/messages`, {
          agent: false,
          method: "POST",
          headers: { authorization: `Bearer ${p.token}`, "content-type": "application/json", "transfer-encoding": "chunked" },
        });
        req.on("response", (res) => {
          res.resume().on("end", () => resolve(res.statusCode ?? 0));
        });
        // The daemon may answer and close before the whole upload is sent.
        req.on("error", (err: NodeJS.ErrnoException) => (err.code === "EPIPE" || err.code === "ECONNRESET" ? undefined : reject(err)));
        for (let i = 0; i < body.length; i += 256 * 1024) req.write(body.slice(i, i + 256 * 1024));
        req.end();
      });
    expect(await chunked(JSON.stringify({ text: "x".repeat(2 * 1024 * 1024 + 16) }))).toBe(413);
    expect(await chunked(JSON.stringify({ text: "a small chunked message", conversation: "chunked" }))).toBe(202);
  });

  it("a fetch() client (what the SDK uses) gets the 413 every time, not a dropped connection", async () => {
    const big = JSON.stringify({ text: "x".repeat(2 * 1024 * 1024 + 16) });
    const outcomes: string[] = [];
    for (let i = 0; i < 6; i++) {
      try {
        const r = await p.api<ErrorBody>("POST", `/v1/agents/${id}/messages`, undefined, { raw: big });
        outcomes.push(`${r.status} ${r.json.code}`);
      } catch (err) {
        outcomes.push(`${(err as Error).message}: ${String((err as { cause?: { code?: string } }).cause?.code)}`);
      }
    }
    expect(outcomes).toEqual(Array(6).fill("413 body_too_large"));
  });
});
