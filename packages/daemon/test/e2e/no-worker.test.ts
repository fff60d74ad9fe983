/**
 * A worker tool that no worker serves fails at once, saying so, instead of
 * waiting out the call timeout; only right after a start do calls wait for
 * workers to reconnect, for config.yaml's `worker_grace`.
 */
import { expect, it } from "vitest";
import { agentFile, createProject, short } from "../helpers/spawn-daemon.js";

it("fails at once with 'No worker serves workers/NAME' once the start's grace has passed", async (ctx) => {
  const p = await createProject({
    scope: ctx,
    config: (text) => `${text}worker_grace: 0.3\n`,
    scripts: {
      invoicer: 'steps:\n  - tool_calls: [{ tool: "workers/send_invoice", args: { to: "a@example.com" } }]\n  - text: "{{result}}"\n',
    },
    files: {
      "agents/invoicer.md": agentFile({ description: "Sends invoices", model: "invoicer", tools: ["workers/*"] }),
    },
  });
  await new Promise((r) => setTimeout(r, 400));
  const started = Date.now();
  const { end, run } = await p.send("invoicer", "bill them");
  expect(Date.now() - started).toBeLessThan(5000);
  expect(end.type).toBe("dev.wardrik.turn.completed");
  expect(String(end.data.reply)).toMatch(/^No worker serves workers\/send_invoice\./);
  const failed = (await p.events("invoicer")).find((e) => e.run === run && short(e.type) === "call.failed")!;
  expect(failed.data).toMatchObject({ tool: "workers/send_invoice", code: "no_worker", retryable: true });
});

it("a call made during the start's grace, with no worker ever arriving, fails once the grace ends, not after tool_timeout", async (ctx) => {
  const GRACE_MS = 6000;
  const p = await createProject({
    scope: ctx,
    start: false,
    config: (text) => `${text}tool_timeout: 120\nworker_grace: ${GRACE_MS / 1000}\n`,
    scripts: {
      invoicer: 'steps:\n  - tool_calls: [{ tool: "workers/send_invoice", args: { to: "a@example.com" } }]\n  - text: "{{result}}"\n',
    },
    files: {
      "agents/invoicer.md": agentFile({ description: "Sends invoices", model: "invoicer", tools: ["workers/*"] }),
    },
  });
  // The daemon starts after this instant, so its grace cannot end before GRACE_MS from here.
  const beforeStart = Date.now();
  await p.start();
  const { end, run } = await p.send("invoicer", "bill them", "main", 60_000);
  expect(end.type).toBe("dev.wardrik.turn.completed");
  expect(String(end.data.reply)).toMatch(/^No worker serves workers\/send_invoice\./);
  const events = (await p.events("invoicer")).filter((e) => e.run === run);
  const failed = events.find((e) => short(e.type) === "call.failed")!;
  expect(failed.data).toMatchObject({ tool: "workers/send_invoice", code: "no_worker" });
  expect(events.some((e) => short(e.type) === "call.timed_out")).toBe(false);
  // It waited for a worker while the grace lasted (failing at once would land before this).
  expect(Date.parse(failed.time)).toBeGreaterThanOrEqual(beforeStart + GRACE_MS);
}, 90_000);
