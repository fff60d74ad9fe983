/**
 * A worker tool that no worker serves fails at once, saying so, instead of
 * waiting out the call timeout; only right after a start do calls wait a few
 * seconds for workers to reconnect.
 */
import { expect, it } from "vitest";
import { agentFile, createProject, short } from "../helpers/spawn-daemon.js";

it("fails at once with 'No worker serves workers/NAME' once the start's grace has passed", async (ctx) => {
  const p = await createProject({
    scope: ctx,
    env: { WARDRIK_RECONNECT_GRACE_MS: "300" },
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
