import type { Command } from "commander";
import type { DeliveryView } from "@wardrik/protocol";
import { connected } from "../connect-on-demand.js";
import { examples, json, out, UsageError } from "../output.js";

export function registerDeliveries(program: Command): void {
  const deliveries = examples(
    program
      .command("deliveries")
      .option("--failed", "only dead letters (deliveries whose retry window ran out)")
      .option("--pending", "only deliveries not yet accepted by their subscriber")
      .option("--limit <n>", "at most this many, newest first (1-1000)", (v) => Number.parseInt(v, 10), 100)
      .option("--json", "print JSON")
      .description("webhook deliveries of events to config.yaml's subscribers, newest first, with every attempt"),
    "wardrik deliveries",
    "wardrik deliveries --failed",
    "wardrik deliveries retry dlv_01JF8X5RQ2M3V9ZK0B7Y4T6WHN",
  ).action(async (opts: { failed?: boolean; pending?: boolean; limit: number; json?: boolean }) => {
    if (opts.failed && opts.pending) throw new UsageError("--failed and --pending exclude each other; give one.");
    if (!Number.isInteger(opts.limit) || opts.limit < 1 || opts.limit > 1000)
      throw new UsageError("--limit must be a whole number from 1 to 1000.");
    const client = await connected();
    const { shortType } = await import("@wardrik/protocol/base");
    const status = opts.failed ? "failed" : opts.pending ? "pending" : undefined;
    const page = await client.deliveries({ ...(status ? { status } : {}), limit: opts.limit });
    if (opts.json) return json(page.deliveries);
    if (page.deliveries.length === 0)
      return out(status ? `No ${status} deliveries.` : "No deliveries (config.yaml subscribers: receive events once set).");
    const names = new Map((await client.listAgents()).map((a) => [a.id, a.name]));
    for (const d of page.deliveries) printDelivery(d, names.get(d.agent) ?? d.agent, shortType);
    if (page.next) out(`(more: wardrik deliveries --limit ${Math.min(1000, opts.limit * 2)})`);
  });

  examples(
    deliveries
      .command("retry")
      .argument("<id>", "the delivery's ID (dlv_...)")
      .option("--json", "print JSON")
      .description("send a delivery again (a dead letter, or one delivered before), with a fresh retry window"),
    "wardrik deliveries retry dlv_01JF8X5RQ2M3V9ZK0B7Y4T6WHN",
  ).action(async (id: string, opts: { json?: boolean }) => {
    const d = await (await connected()).retryDelivery(id);
    const { shortType } = await import("@wardrik/protocol/base");
    if (opts.json) return json(d);
    out(`Queued ${d.id} (${shortType(d.event_type)} #${d.seq}) for ${d.subscriber} again.`);
  });
}

/** `shortType` of @wardrik/protocol/base, loaded by the action (defining the command loads none of the protocol). */
function printDelivery(d: DeliveryView, agent: string, shortType: (type: string) => string): void {
  const when = d.status === "pending" && d.next_attempt_at ? `, next attempt ${d.next_attempt_at}` : d.ended_at ? `, ${d.ended_at}` : "";
  out(
    `${d.id}  ${d.status.padEnd(9)} ${shortType(d.event_type)} #${d.seq} of ${agent} -> ${d.subscriber}  (${d.attempts} attempt${d.attempts === 1 ? "" : "s"}${when})`,
  );
  for (const a of d.attempt_log) {
    const result = a.status !== undefined ? `HTTP ${a.status}` : "no answer";
    out(
      `    #${a.attempt} ${a.started_at} ${result} in ${a.duration_ms} ms${a.error && a.status === undefined ? `: ${a.error}` : a.error ? ` ${a.error.replace(/^HTTP \d+:? ?/, "")}`.trimEnd() : ""}`,
    );
  }
}
