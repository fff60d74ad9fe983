/**
 * config.yaml's `deliveries: { keep_delivered }`: delivered deliveries are
 * listed until they are that old, then deleted; a dead letter stays. Real
 * daemon, real receivers. (A bad value: config/new-keys.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DeliveryView } from "@wardrik/protocol";
import { agentFile, createProject, waitFor, type TestProject } from "../helpers/spawn-daemon.js";
import { startReceiver, type Receiver } from "../helpers/webhook-receiver.js";

let p: TestProject;
let taking: Receiver;
let refusing: Receiver;

/** The deliveries through the API: the waits poll this, a CLI process per look would cost a node start each time. */
async function deliveries(): Promise<DeliveryView[]> {
  return (await p.apiOk<{ deliveries: DeliveryView[] }>("GET", "/v1/deliveries?limit=1000")).deliveries;
}

/** The same list as `wardrik deliveries --json` prints it. */
async function cliDeliveries(): Promise<DeliveryView[]> {
  const r = await p.cli(["deliveries", "--json", "--limit", "1000"]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as DeliveryView[];
}

beforeAll(async () => {
  taking = await startReceiver();
  refusing = await startReceiver({ respond: () => ({ status: 500 }) });
  p = await createProject({
    config: (text) => `${text.replace(/\n?$/, "\n")}subscribers:
  - url: ${taking.url}
    types: [turn.completed]
    agents: [kept]
  - url: ${refusing.url}
    types: [turn.completed]
    agents: [refused]
    retry_for: 1
deliveries:
  keep_delivered: 5
`,
    files: {
      "agents/kept.md": agentFile({ description: "Delivered", model: "script/echo" }),
      "agents/refused.md": agentFile({ description: "Dead-lettered", model: "script/echo" }),
    },
  });
});

afterAll(async () => {
  await p?.dispose();
  await taking?.close();
  await refusing?.close();
});

describe("keep_delivered", () => {
  it("deletes delivered deliveries once older than keep_delivered and keeps dead letters", async () => {
    await p.send("kept", "one");
    await p.send("refused", "two");
    const listed = await waitFor(async () => {
      const all = await deliveries();
      return all.some((d) => d.status === "delivered") && all.some((d) => d.status === "failed") ? all : undefined;
    }, "one delivered and one dead letter");
    expect(taking.accepted()).toHaveLength(1);
    const deliveredId = listed.find((d) => d.status === "delivered")!.id;

    // Listed while younger than 5 s, gone within a few seconds after.
    const left = await waitFor(
      async () => {
        const all = await deliveries();
        return all.some((d) => d.id === deliveredId) ? undefined : all;
      },
      "the delivered delivery to be deleted",
      20_000,
    );
    expect(left.map((d) => d.status)).toEqual(["failed"]);
    expect((await cliDeliveries()).map((d) => d.status)).toEqual(["failed"]);
  });
});
