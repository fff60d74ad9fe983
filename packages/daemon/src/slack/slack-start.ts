/** Slack in a daemon's start: made once the runtime exists, started once the daemon listens. */
import type { ProjectConfig, SlackSettings } from "../config/types.js";
import type { EventBus } from "../events/event-bus.js";
import type { Logger } from "../log/logger.js";
import type { WardrikMetrics } from "../metrics/wardrik-metrics.js";
import type { Runtime } from "../runtime/runtime.js";
import type { Store } from "../store/store.js";
import { intervalMs } from "../config/positive-number.js";
import { SlackService } from "./slack-service.js";

export function slackService(
  settings: SlackSettings,
  org: string,
  o: {
    store: Store;
    runtime: Runtime;
    bus: EventBus;
    log: Logger;
    node: string;
    env: NodeJS.ProcessEnv;
    /** Counts posts made again while an earlier copy could not be ruled out. */
    metrics: Pick<WardrikMetrics, "possibleRepeat">;
  },
): SlackService {
  // Tests of a spawned daemon sweep, update a streamed reply, and let the sweep finish a reply sooner than the defaults.
  const ms = (name: string) => intervalMs(o.env[name]);
  return new SlackService({
    settings,
    org,
    store: o.store,
    runtime: o.runtime,
    bus: o.bus,
    log: o.log,
    node: o.node,
    onPossibleDuplicate: () => o.metrics.possibleRepeat("slack_post"),
    sweepMs: ms("WARDRIK_SLACK_SWEEP_MS"),
    minUpdateMs: ms("WARDRIK_SLACK_UPDATE_MS"),
    replyGraceMs: ms("WARDRIK_SLACK_REPLY_GRACE_MS"),
  });
}

/** Says which configured channels name no agent, then starts the service. */
export async function startSlack(slack: SlackService, config: ProjectConfig, store: Store, log: Logger): Promise<void> {
  for (const [channel, agent] of Object.entries(config.slack?.channels ?? {}))
    if (!(await store.agents.byName(config.org, agent)))
      log("warn", `config.yaml slack.channels: ${channel} names agent ${agent}, which does not exist`, { channel, agent });
  await slack.start();
}
