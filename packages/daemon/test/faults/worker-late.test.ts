/**
 * A crash that takes the workers down too (a machine restart): the daemon comes
 * back first, its workers a little later. Recovery must wait for them (for
 * config.yaml's worker_grace) instead of failing the calls at once (issue 5, acceptance 4).
 *
 * Here the turn was interrupted during its first model call, so after the
 * restart the daemon asks the model again, and the model asks for worker tools
 * while no worker is connected yet.
 */
import { dirname, join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { short, waitUntil } from "./fault-api.js";
import { checkInvariants, scopeToMessages } from "./fault-invariants.js";
import { settle } from "./fault-settle.js";
import { startWorker, waitForWorker } from "./fault-worker-process.js";
import { callsByTool, faultProject, ofType, turnEvents, type FaultProject } from "./fault-project.js";

let f: FaultProject;
beforeAll(async () => {
  // The default worker_grace: a worker process takes a while to start on a busy machine.
  f = await faultProject({ late: { model1Ms: 1000, toolMs: { lookup: 100, upsert: 100, charge: 100 } } }, {}, { workerGrace: 30 });
});

describe("workers that come back after the daemon", () => {
  it("a turn interrupted during a model call: its worker calls wait for the worker and run once", { timeout: 60_000 }, async () => {
    const kill = await f.armKill((e) => short(e.type) === "turn.started");
    const m = await f.send("late-1");
    await kill.fired;
    await f.w.stop();
    await f.restart({ waitForWorker: false });
    // The recovered model call (1 s) answers while no worker is connected: the daemon waits for the worker's tools.
    // The worker comes back only then.
    await waitUntil(
      () => f.p.daemonStderr().includes('"msg":"a tool the model asked for is not served yet: waiting for it"'),
      "the recovered turn waiting for the worker's tools",
    );
    const w2 = startWorker(f.d, join(dirname(f.p.dir), "faults"), "worker2");
    try {
      await waitForWorker(f.d, w2.child.pid!);
      const r = await settle(f.d, f.agentId, [m]);
      const turn = turnEvents(r.events, m);
      const log = [...f.w.log(), ...w2.log()];
      const report = checkInvariants({ ...scopeToMessages(r.events, log, [m]), accepted: [m] });
      expect(report.failures).toEqual([]);
      for (const id of Object.values(callsByTool(turn))) {
        expect(ofType(turn, "call.completed", id)).toHaveLength(1);
        expect(w2.log().filter((l) => l.key === id && l.phase === "start")).toHaveLength(1);
      }
    } finally {
      await w2.stop();
    }
  });
});
