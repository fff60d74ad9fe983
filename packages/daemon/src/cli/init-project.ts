import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { ensureAdminToken } from "../admin-token.js";
import { withSchemaComment } from "../editor-schemas.js";

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

const WORKER = `// An example worker: run it with \`npx tsx workers/tools.ts\` while the daemon runs.
// Inside the project directory it finds the daemon through WARDRIK_URL / WARDRIK_TOKEN:
//   WARDRIK_URL=http://127.0.0.1:7373 WARDRIK_TOKEN=$(cat .wardrik/admin-token) npx tsx workers/tools.ts
import { Wardrik } from "@wardrik/sdk";
import { z } from "zod";

const wardrik = new Wardrik();

wardrik.tool({
  name: "find_order",
  description: "Find an order by its ID, with its status and total.",
  input: z.object({ order_id: z.string().describe("Order ID, such as ord_1234") }),
  readOnly: true,
  run: ({ order_id }) => ({ id: order_id, status: "shipped", total: 42 }),
});

wardrik.tool({
  name: "refund_order",
  description: "Refund an order in full.",
  input: z.object({ order_id: z.string(), amount: z.number().describe("Amount in USD") }),
  idempotent: true,
  run: ({ order_id, amount }, { idempotencyKey }) => ({ refunded: order_id, amount, key: idempotencyKey }),
});

await wardrik.listen();
`;

/** Writes a working example project; refuses to overwrite a non-empty directory. */
export function initProject(target: string): { dir: string; files: string[] } {
  const dir = resolve(target);
  if (existsSync(dir) && readdirSync(dir).length > 0) {
    throw new Error(`${dir} is not empty; wardrik init needs a new or empty directory.`);
  }
  const files: [string, string][] = [
    ["config.yaml", CONFIG],
    [join("agents", "helper.md"), AGENT],
    [join("policies", "default.yaml"), POLICY],
    [join("workers", "tools.ts"), WORKER],
    [".gitignore", ".wardrik/\n"],
  ];
  for (const [path, text] of files) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), withSchemaComment(path, text));
  }
  ensureAdminToken(dir);
  return { dir, files: [...files.map(([p]) => p), ".wardrik/admin-token"] };
}
