/**
 * The OpenAPI document at /v1/openapi.json, as a client toolchain uses it: it
 * passes an OpenAPI 3.1 validator, names every operation, shares its shapes
 * and error answers as components, documents the event stream, and generates
 * a typed client (openapi-typescript + openapi-fetch) that type-checks and
 * works against the running daemon.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { compileErrors, validate } from "@readme/openapi-parser";
import openapiTS, { astToString } from "openapi-typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentFile, createProject, REPO_ROOT, type TestProject } from "../helpers/spawn-daemon.js";

const run = promisify(execFile);

interface Operation {
  operationId?: string;
  tags?: string[];
  summary?: string;
  security?: unknown[];
  parameters?: { name: string; in: string; required?: boolean }[];
  requestBody?: { required?: boolean; content: Record<string, { schema: { $ref?: string } }> };
  responses: Record<string, { $ref?: string; content?: Record<string, unknown>; headers?: Record<string, unknown> }>;
}
interface Doc {
  openapi: string;
  tags: { name: string }[];
  security: unknown[];
  components: {
    schemas: Record<string, { additionalProperties?: boolean; properties?: Record<string, unknown>; required?: string[] }>;
    responses: Record<string, { headers?: Record<string, unknown>; content: Record<string, { schema: { $ref: string } }> }>;
    headers: Record<string, unknown>;
  };
  paths: Record<string, Record<string, Operation>>;
}

let p: TestProject;
let doc: Doc;
const work = mkdtempSync(join(tmpdir(), "wardrik-typed-client-"));

beforeAll(async () => {
  p = await createProject({ files: { "agents/echoer.md": agentFile({ description: "Echoes", model: "script/echo" }) } });
  doc = (await p.api<Doc>("GET", "/v1/openapi.json", undefined, { token: null })).json;
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

const operations = () =>
  Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method, op })));

describe("the document", () => {
  it("is valid OpenAPI 3.1 by @readme/openapi-parser", async () => {
    const result = await validate(structuredClone(doc) as never);
    expect(result.valid, result.valid ? "" : compileErrors(result)).toBe(true);
    expect(result.specification).toBe("OpenAPI");
    expect(doc.openapi).toMatch(/^3\.1\./);
  });

  it("gives every operation a unique camelCase operationId, a declared tag and a summary", () => {
    const ids = operations().map(({ op }) => op.operationId);
    expect(ids.every((x) => typeof x === "string" && /^[a-z][A-Za-z]+$/.test(x))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    const tags = new Set(doc.tags.map((t) => t.name));
    for (const { path, method, op } of operations()) {
      expect(op.tags?.length, `${method} ${path}`).toBeGreaterThan(0);
      for (const t of op.tags!) expect(tags.has(t), `${method} ${path}: tag ${t}`).toBe(true);
      expect(op.summary, `${method} ${path}`).toEqual(expect.any(String));
    }
    expect(ids).toEqual(expect.arrayContaining(["listAgents", "postMessage", "cancelAgent", "clearConversations", "streamEvents"]));
  });

  it("shares the API's shapes and its Error body as components", () => {
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining([
        "Problem",
        "AgentSummary",
        "AgentDetail",
        "AgentPage",
        "TurnView",
        "CloudEvent",
        "ScopeBody",
        "PostMessageBody",
      ]),
    );
    // Errors are RFC 9457 problem documents, with code and retryable as extension members.
    const problem = doc.components.schemas.Problem!;
    expect(problem.required?.sort()).toEqual(["code", "detail", "retryable", "status", "title", "type"]);
    expect(Object.keys(problem.properties!).sort()).toEqual(["code", "detail", "instance", "retryable", "status", "title", "type"]);
    // Request bodies are strict in the document as they are on the wire.
    for (const body of ["ScopeBody", "PostMessageBody", "CreateAgentBody", "DenyBody", "CreateTokenBody"])
      expect(doc.components.schemas[body]!.additionalProperties, body).toBe(false);
    // Shapes are referenced, not copied.
    expect(JSON.stringify(doc.components.schemas.AgentPage)).toContain('"#/components/schemas/AgentSummary"');
    expect(JSON.stringify(doc.paths["/v1/agents/{id}/messages"]!.post!.requestBody)).toContain("#/components/schemas/PostMessageBody");
  });

  it("documents the error answers each operation can give", () => {
    for (const name of ["BadRequest", "Unauthorized", "NotFound", "Conflict", "BodyTooLarge", "Unprocessable", "HeadersTooLarge"]) {
      expect(Object.keys(doc.components.responses[name]!.content), name).toEqual(["application/problem+json"]);
      expect(doc.components.responses[name]!.content["application/problem+json"]!.schema.$ref, name).toBe("#/components/schemas/Problem");
      expect(doc.components.responses[name]!.headers, name).toHaveProperty("X-Request-Id");
    }
    expect(doc.components.responses.Unauthorized!.headers).toHaveProperty("WWW-Authenticate");
    const ref = (op: Operation, status: string) => op.responses[status]?.$ref;
    for (const { path, method, op } of operations()) {
      const where = `${method} ${path}`;
      expect(ref(op, "400"), where).toBe("#/components/responses/BadRequest");
      expect(ref(op, "431"), where).toBe("#/components/responses/HeadersTooLarge");
      expect(op.responses.default, where).toBeDefined();
      const isPublic = Array.isArray(op.security) && op.security.length === 0;
      if (!isPublic) expect(ref(op, "401"), where).toBe("#/components/responses/Unauthorized");
      if (path.includes("{")) expect(ref(op, "404"), where).toBe("#/components/responses/NotFound");
      if (op.requestBody) expect(ref(op, "413"), where).toBe("#/components/responses/BodyTooLarge");
      const ok = Object.keys(op.responses).find((s) => s.startsWith("2"))!;
      expect(op.responses[ok]!.headers, where).toHaveProperty("X-Request-Id");
    }
    expect(ref(doc.paths["/v1/agents"]!.post!, "409")).toBe("#/components/responses/Conflict");
    expect(doc.security).toEqual([{ bearer: [] }]);
    expect(doc.paths["/v1/health"]!.get!.security).toEqual([]);
  });

  it("declares Idempotency-Key on every POST that keeps its answer under one, with the 409 and 422 it brings", () => {
    const posts = operations().filter(({ method }) => method === "post");
    const keyed = posts.filter(({ op }) => op.parameters?.some((x) => x.name === "Idempotency-Key" && x.in === "header"));
    expect(keyed.map(({ path }) => path)).toEqual(
      expect.arrayContaining(["/v1/agents", "/v1/agents/{id}/messages", "/v1/agents/{id}/cancel", "/v1/agents/{id}/calls/{call}/approve"]),
    );
    for (const { path, op } of keyed) {
      expect(op.responses["409"]?.$ref, path).toBe("#/components/responses/Conflict");
      expect(op.responses["422"]?.$ref, path).toBe("#/components/responses/Unprocessable");
    }
    // A token's POST refuses a key (its secret is shown once); routes without a token have no org to keep keys in.
    const keyedPaths = new Set(keyed.map(({ path }) => path));
    expect(keyedPaths.has("/v1/tokens")).toBe(false);
    for (const { path, op } of posts)
      if (Array.isArray(op.security) && op.security.length === 0) expect(keyedPaths.has(path), path).toBe(false);
  });

  it("documents the event stream as text/event-stream resumed with Last-Event-ID", () => {
    const op = doc.paths["/v1/agents/{id}/events/stream"]!.get!;
    expect(Object.keys(op.responses["200"]!.content!)).toEqual(["text/event-stream"]);
    expect(op.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: "Last-Event-ID", in: "header" })]));
    expect(op.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: "after", in: "query" })]));
  });

  it("documents paging on GET /v1/agents", () => {
    const op = doc.paths["/v1/agents"]!.get!;
    expect(op.parameters!.map((x) => x.name).sort()).toEqual(["cursor", "limit", "name"]);
    expect(doc.components.schemas.AgentPage!.required).toEqual(["agents", "next"]);
  });
});

const CLIENT = `import createClient from "openapi-fetch";
import type { components, paths } from "./wardrik-api.js";

type ScopeBody = components["schemas"]["ScopeBody"];
// @ts-expect-error the document says cancel takes only \`conversation\`
const misspelt: ScopeBody = { conversaton: "typed" };

const client = createClient<paths>({
  baseUrl: process.env.WARDRIK_URL!,
  headers: { authorization: \`Bearer \${process.env.WARDRIK_TOKEN}\` },
});
if (process.env.NEVER) {
  // @ts-expect-error limit is an integer
  await client.GET("/v1/agents", { params: { query: { limit: "2" } } });
}

const names: string[] = [];
let cursor: string | undefined;
do {
  const { data, error } = await client.GET("/v1/agents", { params: { query: { limit: 1, ...(cursor ? { cursor } : {}) } } });
  if (error) throw new Error(error.detail);
  names.push(...data.agents.map((a) => a.name));
  cursor = data.next ?? undefined;
} while (cursor);

const found = await client.GET("/v1/agents", { params: { query: { name: "echoer" } } });
const id = found.data!.agents[0]!.id;
const posted = await client.POST("/v1/agents/{id}/messages", { params: { path: { id } }, body: { text: "typed hello", conversation: "typed" } });
if (!posted.data) throw new Error("not queued");
let reply: unknown;
for (let i = 0; i < 200 && reply === undefined; i++) {
  const { data } = await client.GET("/v1/agents/{id}/events", { params: { path: { id }, query: { after: posted.data.seq } } });
  reply = data!.events.find((e) => e.type.endsWith("turn.completed"))?.data.reply;
  if (reply === undefined) await new Promise((r) => setTimeout(r, 50));
}
const refused = await client.POST("/v1/agents/{id}/cancel", { params: { path: { id } }, body: misspelt });
const error: components["schemas"]["Problem"] | undefined = refused.error;
console.log(JSON.stringify({ names, reply, refused: refused.response.status, code: error?.code }));
`;

describe("a typed client generated from the document", () => {
  it("type-checks (wrong calls are type errors) and works against the daemon", async () => {
    writeFileSync(join(work, "wardrik-api.d.ts"), astToString(await openapiTS(structuredClone(doc) as never)));
    writeFileSync(join(work, "client.ts"), CLIENT);
    writeFileSync(join(work, "package.json"), JSON.stringify({ type: "module" }));
    writeFileSync(
      join(work, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          module: "nodenext",
          moduleResolution: "nodenext",
          target: "es2023",
          lib: ["es2023"],
          types: ["node"],
          skipLibCheck: true,
        },
        files: ["client.ts"],
      }),
    );
    symlinkSync(join(REPO_ROOT, "node_modules"), join(work, "node_modules"), "dir");

    const tsc = await run(process.execPath, [join(REPO_ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", work]).catch(
      (err: { stdout: string }) => ({ stdout: err.stdout, failed: true }),
    );
    expect(tsc.stdout).toBe("");

    const out = await run(process.execPath, ["--import", "tsx", "client.ts"], {
      cwd: work,
      env: { ...process.env, WARDRIK_URL: p.url, WARDRIK_TOKEN: p.token },
    });
    expect(JSON.parse(out.stdout)).toEqual({
      names: ["echoer", "helper"],
      reply: "You said: typed hello",
      refused: 400,
      code: "bad_request",
    });
  });
});
