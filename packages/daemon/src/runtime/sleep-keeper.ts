import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { AgentDriver } from "./agent-driver.js";
import type { Runtime } from "./runtime.js";

/** How many agents falling asleep make a burst worth a collection, and how long it must be quiet after it. */
export interface MemoryCollectOptions {
  afterSleeps: number;
  quietMs: number;
}

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
  /** Agents put to sleep since the last collection, and when the latest one was. */
  private sleptSinceCollect = 0;
  private lastSlept = 0;
  /** Collections left to try while the young generation has not shrunk after a burst. */
  private retries = 0;

  constructor(
    private readonly rt: Runtime,
    private readonly drivers: Map<string, AgentDriver>,
    everyMs: number,
    private readonly collect: MemoryCollectOptions = { afterSleeps: 100, quietMs: 6_000 },
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
      }, d.org);
      // A parked agent keeps its status; remember it slept so waking says so.
      if (!asleep) this.sleeping.add(d.id);
      slept++;
    }
    if (slept > 0) {
      this.sleptSinceCollect += slept;
      this.lastSlept = now;
    }
    this.collectAfterBurst(now);
  }

  /**
   * Many agents let go of their memory. Collecting during the wave keeps the old generation from growing;
   * collecting once it has been quiet a while is what gives memory back: V8 shrinks its young generation
   * (grown to its maximum in a burst) only in a collection that finds little allocated since the previous
   * one. If it has not shrunk (something kept allocating), the collection is tried again a few times.
   */
  private collectAfterBurst(now: number): void {
    const quiet = now - this.lastSlept >= this.collect.quietMs;
    if (this.sleptSinceCollect >= this.collect.afterSleeps && (quiet || now - this.lastCollect > 10_000)) {
      this.lastCollect = now;
      if (!quiet) return collectGarbage();
      this.sleptSinceCollect = 0;
      this.collected("memory collected after agents fell asleep");
      this.retries = youngGenerationMb() > YOUNG_SHRUNK_MB ? MAX_RETRIES : 0;
    } else if (this.retries > 0 && now - this.lastCollect >= this.collect.quietMs) {
      this.lastCollect = now;
      if (youngGenerationMb() <= YOUNG_SHRUNK_MB) {
        this.retries = 0;
        return;
      }
      this.retries--;
      this.collected("memory collected again: the young generation had not shrunk");
    }
  }

  private collected(msg: string): void {
    const before = process.memoryUsage();
    collectGarbage();
    const after = process.memoryUsage();
    const mb = (n: number) => Math.round(n / 1e5) / 10;
    this.rt.opts.log("debug", msg, {
      heap_total_mb: [mb(before.heapTotal), mb(after.heapTotal)],
      rss_mb: [mb(before.rss), mb(after.rss)],
      young_generation_mb: youngGenerationMb(),
    });
  }
}

/** A young generation at most this big counts as given back; a burst grows it to 32 MB (two 16 MB semi-spaces). */
const YOUNG_SHRUNK_MB = 8;
const MAX_RETRIES = 3;

function youngGenerationMb(): number {
  const space = getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
  return space ? space.space_size / 1024 / 1024 : 0;
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
