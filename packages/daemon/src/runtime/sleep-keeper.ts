import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { AgentDriver } from "./agent-driver.js";
import type { Runtime } from "./runtime.js";

/**
 * Puts agents to sleep after their idle_timeout: their driver stops, their
 * tools release what they held (MCP servers), and their state stays in the
 * database until a message, an approval or an event wakes them.
 */
export class SleepKeeper {
  /** Agents put to sleep whose stored status is not `asleep` (parked ones): waking them says so. */
  private readonly sleeping = new Set<string>();
  private readonly timer: NodeJS.Timeout;
  private lastCollect = 0;

  constructor(
    private readonly rt: Runtime,
    private readonly drivers: Map<string, AgentDriver>,
    everyMs: number,
  ) {
    this.timer = setInterval(() => void this.sleepIdle().catch(() => undefined), everyMs);
    this.timer.unref();
  }

  /** Whether the agent was put to sleep here while parked (and forgets it). */
  wasAsleep(agentId: string): boolean {
    return this.sleeping.delete(agentId);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async sleepIdle(): Promise<void> {
    const now = Date.now();
    let slept = 0;
    for (const d of [...this.drivers.values()]) {
      const idle = d.def.idle_timeout;
      if (idle === "infinity" || d.busy || now - d.lastActive < idle * 1000) continue;
      this.drivers.delete(d.id);
      await d.close();
      await this.rt.tools.release({ org: d.org, agentId: d.id });
      const asleep = await this.rt.store.tx(async (w) => {
        const marked = await this.rt.store.agents.markAsleep(w, d.id);
        // An asleep agent is nobody's: the next message, decision or trigger wakes it on whichever node takes it.
        await this.rt.ownership.release(w, d.id, d.lease);
        w.emit(d.ref, "agent.asleep", { idle_seconds: idle });
        return marked;
      });
      // A parked agent keeps its status; remember it slept so waking says so.
      if (!asleep) this.sleeping.add(d.id);
      slept++;
    }
    // Many agents just let go of their memory: collect now, so the process gives it back.
    if (slept >= 100 && now - this.lastCollect > 10_000) {
      this.lastCollect = now;
      collectGarbage();
    }
  }
}

let gc: (() => void) | undefined;
/** A full collection (V8's gc, enabled at first use); after a mass sleep it lets RSS shrink. */
function collectGarbage(): void {
  try {
    if (!gc) {
      setFlagsFromString("--expose-gc");
      gc = runInNewContext("gc") as () => void;
    }
    gc();
  } catch {
    // Not available in this runtime: memory is returned by V8 on its own schedule.
  }
}
