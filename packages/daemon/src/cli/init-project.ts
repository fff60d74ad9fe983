import { copyFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { ensureAdminToken } from "../admin-token.js";
import { withSchemaComment } from "../schema-files.js";
import { VERSION } from "../version.js";
import type { SdkTarballs } from "./sdk-tarballs.js";

const CONFIG = `# Wardrik daemon settings. Changes take effect when the daemon restarts.
org: default
listen: 127.0.0.1:7373
database: sqlite:.wardrik/wardrik.db

# The default model. "demo" is the scripted model: it plays a fixed script
# offline, so this project works without an API key.
model: demo
models:
  demo:
    provider: script
    model: demo
  # A real model through any OpenAI-compatible server (Ollama, vLLM, llama.cpp):
  # local:
  #   provider: openai-compatible
  #   model: qwen2.5:7b
  #   base_url: http://127.0.0.1:11434/v1
  #   api_key: \${env:LOCAL_KEY}
  #   price:
  #     input: 0.15
  #     output: 0.60

# The policy for agents that name none.
policy: default
`;

const AGENT = `---
description: A small helper that keeps notes in its file space.
title: Helper
tools: [files, workers/*]
max_iterations: 10
---
You are a helpful assistant. Keep short notes in your files when they help,
and answer briefly.
`;

const POLICY = `description: Let the agent use its own files; ask before anything else that writes.
budget:
  per_turn_usd: 0.50
  per_day_usd: 5
rules:
  - tool: files/*
    decision: allow
  - tool: workers/refund_order
    when:
      amount:
        gt: 100
    decision: deny
    reason: Refunds over $100 go through finance.
`;

// The model "demo" of config.yaml plays this file (a project's scripts/NAME.yaml comes before a built-in script).
const DEMO_SCRIPT = `# The scripted model "demo" (config.yaml, models.demo) plays this file: no API
# key, no network. Each model call of a turn plays the next step; the first
# scenario whose match (a regular expression) fits the latest message plays,
# else the top-level steps. {{message}} is that message, {{result}} the result
# of the previous tool call. The README describes every key.
description: The offline example model of this project.
scenarios:
  # Worker tools: run \`npm run worker\` first. refund_order is not read-only,
  # so the policy asks a person: \`wardrik approve helper CALL_ID\`.
  - match: order|refund
    steps:
      - tool_calls:
          - tool: workers/find_order
            args: { order_id: ord_1234 }
      - tool_calls:
          - tool: workers/refund_order
            args: { order_id: ord_1234, amount: 42 }
      - text: "Order ord_1234 is refunded: {{result}}"
steps:
  - tool_calls:
      - tool: files/write
        args: { path: notes/last-question.md, content: "{{message}}" }
  - tool_calls:
      - tool: files/read
        args: { path: notes/last-question.md }
  - text: 'I saved your question in notes/last-question.md. Reading it back: "{{result}}"'
`;

const WORKER = `// An example worker: \`npm install\` once, then \`npm run worker\` while the daemon runs.
// In this folder it finds the daemon as the CLI does: its address in .wardrik/daemon.json
// (written by the running daemon) or config.yaml, and the admin token in .wardrik/admin-token.
// Elsewhere, set WARDRIK_URL and WARDRIK_TOKEN (a token of the org from \`wardrik token ORG\`).
import { readFileSync } from "node:fs";
import { Wardrik } from "@wardrik/sdk";
import { z } from "zod";

const wardrik = new Wardrik({
  url: process.env.WARDRIK_URL ?? daemonUrl(),
  token: process.env.WARDRIK_TOKEN ?? readFileSync(".wardrik/admin-token", "utf8").trim(),
});

wardrik.tool({
  name: "find_order",
  title: "Find order",
  description: "Find an order by its ID, with its status and total.",
  input: z.object({ order_id: z.string().describe("Order ID, such as ord_1234") }),
  readOnly: true,
  run: ({ order_id }) => ({ id: order_id, status: "shipped", total: 42 }),
});

wardrik.tool({
  name: "refund_order",
  title: "Refund order",
  description: "Refund an order in full.",
  input: z.object({ order_id: z.string(), amount: z.number().describe("Amount in USD") }),
  idempotent: true,
  run: ({ order_id, amount }, { idempotencyKey }) => ({ refunded: order_id, amount, key: idempotencyKey }),
});

// listen() rejects only when retrying cannot help (a refused token, a wrong URL): say why and stop.
await wardrik.listen().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});

/** The running daemon's address (.wardrik/daemon.json, also after \`wardrik daemon --port N\`), else config.yaml's \`listen:\`. */
function daemonUrl(): string {
  try {
    const running = JSON.parse(readFileSync(".wardrik/daemon.json", "utf8")) as { url?: unknown; pid?: unknown };
    if (typeof running.url === "string" && typeof running.pid === "number" && alive(running.pid)) return running.url;
  } catch {
    // No daemon.json: the daemon has not started yet, or stopped.
  }
  const listen = /^listen:[ \\t]*["']?([^"'\\s#]+)/m.exec(readFileSync("config.yaml", "utf8"))?.[1] ?? "7373";
  return \`http://127.0.0.1:\${listen.slice(listen.lastIndexOf(":") + 1)}\`;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
`;

/** Where the project's SDK tarballs are copied, so the project installs wherever it is moved or cloned. */
export const VENDOR_DIR = "vendor";

/**
 * The project's own package.json: what its worker needs, so `npm install` works outside the Wardrik checkout.
 * With `vendored` the SDK (and the protocol package it needs) install from the copies in vendor/. The protocol
 * package is listed either way: it ships the JSON Schemas the files' `$schema` comments name (schema-files.ts).
 */
function packageJson(dir: string, vendored: { protocol: string; sdk: string } | undefined): string {
  const sdk = vendored
    ? { "@wardrik/protocol": `file:${VENDOR_DIR}/${vendored.protocol}`, "@wardrik/sdk": `file:${VENDOR_DIR}/${vendored.sdk}` }
    : { "@wardrik/protocol": VERSION, "@wardrik/sdk": VERSION };
  const pkg = {
    name: packageName(basename(dir)),
    version: "0.0.0",
    private: true,
    type: "module",
    scripts: { worker: "tsx workers/tools.ts" },
    dependencies: { ...sdk, tsx: "^4.23.0", zod: "^4.6.7" },
    devDependencies: { "@types/node": "^20.19.0" },
    // npm 11 asks before it runs install scripts: tsx's esbuild checks its binary in one.
    allowScripts: { esbuild: true },
  };
  return JSON.stringify(pkg, null, 2) + "\n";
}

/** A folder name made into a valid npm package name. */
function packageName(folder: string): string {
  const name = folder
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[._-]+/, "")
    .slice(0, 200);
  return name === "" ? "wardrik-project" : name;
}

const TSCONFIG = `{
  "compilerOptions": {
    "target": "ES2023",
    "module": "NodeNext",
    "moduleResolution": "NodeNext",
    "strict": true,
    "noEmit": true,
    "skipLibCheck": true,
    "types": ["node"]
  },
  "include": ["workers"]
}
`;

export interface InitOptions {
  /** The SDK's tarballs (see sdk-tarballs.ts): copied to vendor/ and named by file: in package.json. */
  sdk?: SdkTarballs | undefined;
}

/** Writes a working example project; refuses to overwrite a non-empty directory. */
export function initProject(target: string, options: InitOptions = {}): { dir: string; files: string[]; sdk: "vendored" | "registry" } {
  const dir = resolve(target);
  if (existsSync(dir) && readdirSync(dir).length > 0) {
    throw new Error(`${dir} is not empty; wardrik init needs a new or empty directory.`);
  }
  const vendored = options.sdk && { protocol: basename(options.sdk.protocol), sdk: basename(options.sdk.sdk) };
  const files: [string, string][] = [
    ["config.yaml", CONFIG],
    [join("agents", "helper.md"), AGENT],
    [join("policies", "default.yaml"), POLICY],
    [join("scripts", "demo.yaml"), DEMO_SCRIPT],
    [join("workers", "tools.ts"), WORKER],
    ["package.json", packageJson(dir, vendored)],
    ["tsconfig.json", TSCONFIG],
    [".gitignore", ".wardrik/\nnode_modules/\n"],
  ];
  for (const [path, text] of files) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), withSchemaComment(path, text));
  }
  const copied: string[] = [];
  if (options.sdk && vendored) {
    mkdirSync(join(dir, VENDOR_DIR), { recursive: true });
    for (const [from, name] of [
      [options.sdk.protocol, vendored.protocol],
      [options.sdk.sdk, vendored.sdk],
    ] as const) {
      copyFileSync(from, join(dir, VENDOR_DIR, name));
      copied.push(join(VENDOR_DIR, name));
    }
  }
  ensureAdminToken(dir);
  return { dir, files: [...files.map(([p]) => p), ...copied, ".wardrik/admin-token"], sdk: vendored ? "vendored" : "registry" };
}
