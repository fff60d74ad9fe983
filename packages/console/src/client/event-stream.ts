/**
 * Server-sent events over fetch: EventSource cannot send the Authorization
 * header. Reconnects after a dropped connection with Last-Event-ID, so no
 * event is missed, and stops for good on an answer that retrying cannot fix.
 * Part of the console's client (client/api.ts is the only user).
 */

export interface SseFrame {
  id?: string;
  event: string;
  data: string;
}

export interface FollowOptions {
  headers: () => Record<string, string>;
  onFrame: (frame: SseFrame) => void;
  signal: AbortSignal;
  lastEventId?: string;
  /** Told whether the stream is connected, so the page can say when it is not. */
  onState?: (state: "live" | "reconnecting" | "stopped", why?: string) => void;
}

export function follow(path: string, opts: FollowOptions): void {
  void run(path, opts);
}

async function run(path: string, opts: FollowOptions): Promise<void> {
  let last = opts.lastEventId;
  let delay = 500;
  while (!opts.signal.aborted) {
    try {
      const res = await fetch(path, {
        headers: { ...opts.headers(), accept: "text/event-stream", ...(last !== undefined ? { "last-event-id": last } : {}) },
        signal: opts.signal,
        cache: "no-store",
      });
      if (res.status >= 400 && res.status < 500) {
        opts.onState?.("stopped", `The event stream was refused (${res.status}).`);
        return;
      }
      if (!res.ok || !res.body) throw new Error(`status ${res.status}`);
      opts.onState?.("live");
      delay = 500;
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = "";
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buf = (buf + value).replace(/\r\n/g, "\n");
        let end: number;
        while ((end = buf.indexOf("\n\n")) >= 0) {
          const frame = parseFrame(buf.slice(0, end));
          buf = buf.slice(end + 2);
          if (!frame) continue;
          if (frame.id !== undefined) last = frame.id;
          opts.onFrame(frame);
        }
      }
    } catch {
      if (opts.signal.aborted) return;
    }
    if (opts.signal.aborted) return;
    opts.onState?.("reconnecting");
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, 5000);
  }
}

function parseFrame(block: string): SseFrame | undefined {
  const frame: SseFrame = { event: "message", data: "" };
  const data: string[] = [];
  for (const line of block.split("\n")) {
    if (line === "" || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "id") frame.id = value;
    else if (field === "event") frame.event = value;
    else if (field === "data") data.push(value);
  }
  if (data.length === 0) return undefined;
  frame.data = data.join("\n");
  return frame;
}
