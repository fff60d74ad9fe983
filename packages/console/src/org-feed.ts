import type { WardrikCloudEvent } from "@wardrik/protocol";
import type { Api } from "./client/api";

export type FeedEvent = WardrikCloudEvent & { cursor: string };
export type StreamState = "connecting" | "live" | "reconnecting" | "stopped";

/**
 * The org-wide feed (`GET /v1/events/stream`), followed once for the whole
 * page: the agents list updates from it without reloading. It starts at the
 * live end and resumes after the last event seen when the connection drops.
 */
export class OrgFeed {
  private readonly listeners = new Set<(e: FeedEvent) => void>();
  private readonly stateListeners = new Set<(s: StreamState) => void>();
  state: StreamState = "connecting";

  constructor(private readonly api: Api) {}

  start(signal: AbortSignal): void {
    this.api.followOrg({
      signal,
      onFrame: (frame) => {
        if (frame.event !== "event") return;
        const e = JSON.parse(frame.data) as FeedEvent;
        for (const l of this.listeners) l(e);
      },
      onState: (s) => {
        this.state = s;
        for (const l of this.stateListeners) l(s);
      },
    });
  }

  subscribe(listener: (e: FeedEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onState(listener: (s: StreamState) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }
}
