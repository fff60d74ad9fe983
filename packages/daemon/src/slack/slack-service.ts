/**
 * Slack for one daemon: config.yaml's `slack:` section brought to life.
 * Requests from Slack are checked against the signing secret, then handled
 * by the inbound side; the outbound side keeps the threads up to date.
 */
import { randomUUID } from "node:crypto";
import type { SlackSettings } from "../config/types.js";
import type { EventBus } from "../events/event-bus.js";
import type { Logger } from "../log/logger.js";
import type { Runtime } from "../runtime/runtime.js";
import type { Store } from "../store/store.js";
import { SlackApi } from "./slack-api.js";
import { SlackInbound } from "./slack-inbound.js";
import { SlackOutbound } from "./slack-outbound.js";
import { signatureProblem, type SignedRequest } from "./verify-signature.js";

export interface SlackServiceOptions {
  settings: SlackSettings;
  org: string;
  store: Store;
  runtime: Runtime;
  bus: EventBus;
  log: Logger;
  /** This daemon's node name (one node on SQLite): Slack work is claimed under it. */
  node: string;
  /** How often Slack is brought up to date with what nobody could do at once (default 30 s). */
  sweepMs?: number;
  /** Least time between two updates of a streamed reply (default a second, Slack's rate for chat.update). */
  minUpdateMs?: number;
  /** How long after its turn ended an unfinished reply is the sweep's (default 5 s). */
  replyGraceMs?: number;
  now?: () => Date;
  /** Told of each Slack post made again while an earlier copy could not be ruled out (a metric). */
  onPossibleDuplicate?: (() => void) | undefined;
}

export class SlackService {
  readonly inbound: SlackInbound;
  private readonly outbound: SlackOutbound;
  private readonly secret: string;
  private readonly now: () => Date;

  constructor(o: SlackServiceOptions) {
    this.secret = o.settings.signing_secret;
    this.now = o.now ?? (() => new Date());
    const api = new SlackApi({ token: o.settings.bot_token, apiUrl: o.settings.api_url, log: o.log });
    const common = { store: o.store, org: o.org, api, log: o.log, now: this.now };
    this.inbound = new SlackInbound({ ...common, settings: o.settings, runtime: o.runtime, owner: `${o.node}/${randomUUID()}` });
    this.outbound = new SlackOutbound({
      ...common,
      bus: o.bus,
      channels: new Set(Object.keys(o.settings.channels)),
      node: o.node,
      onPossibleDuplicate: o.onPossibleDuplicate,
      ...(o.sweepMs !== undefined ? { sweepMs: o.sweepMs } : {}),
      ...(o.minUpdateMs !== undefined ? { minUpdateMs: o.minUpdateMs } : {}),
      ...(o.replyGraceMs !== undefined ? { replyGraceMs: o.replyGraceMs } : {}),
    });
  }

  /** Follows the agents' events, and shows in Slack what could not be shown while the daemon was stopped. */
  start(): Promise<void> {
    return this.outbound.start();
  }

  close(): Promise<void> {
    return this.outbound.close();
  }

  /** Why a request did not come from Slack, or undefined when it did. */
  verify(req: SignedRequest): string | undefined {
    return signatureProblem(this.secret, req, this.now().getTime());
  }

  /** A model's live text, for replies streamed into threads. */
  onDelta(run: string, text: string, reset?: boolean): void {
    this.outbound.onDelta(run, text, reset);
  }
}
