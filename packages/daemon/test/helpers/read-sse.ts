// Reading server-sent events in the e2e helpers: the frames of a response, and an agent's events until one matches.

/** One frame of a stream: its `id:`, `event:` and the `data:` lines joined. */
export interface SseFrame {
  id?: string;
  event?: string;
  data: string;
}

/** Reads SSE frames until `onEvent` returns true or the stream ends; comment lines (keep-alives) are skipped. */
export async function readSse(res: Response, onEvent: (frame: SseFrame) => boolean | void): Promise<void> {
  if (!res.body) throw new Error("no body");
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buf += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
      let end: number;
      while ((end = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, end);
        buf = buf.slice(end + 2);
        const frame: SseFrame = { data: "" };
        const data: string[] = [];
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) continue;
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          const val = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "id") frame.id = val;
          else if (field === "event") frame.event = val;
          else if (field === "data") data.push(val);
        }
        if (data.length === 0 && frame.id === undefined && frame.event === undefined) continue;
        frame.data = data.join("\n");
        if (onEvent(frame) === true) return;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/** Where a daemon is now: read again on each reconnection, since a restart may move it. */
export interface DaemonAddress {
  readonly url: string;
  readonly token: string;
}

/**
 * Follows an agent's event stream from `after` until an event matches, and
 * returns it: the events come as they commit, where a poll of the event list
 * found them up to its interval late and paid a request each time. A
 * request that fails, or a stream that ends (the daemon stopped, or is
 * restarting), is made again from the last event seen, every `retryMs`,
 * until `timeoutMs` has passed; then it fails naming `what`.
 */
export async function followAgentEvents<E extends { seq: number }>(
  daemon: DaemonAddress,
  agentId: string,
  match: (e: E) => boolean,
  what: string,
  timeoutMs: number,
  after = 0,
  retryMs = 50,
): Promise<E> {
  const deadline = Date.now() + timeoutMs;
  const giveUp = new AbortController();
  const timer = setTimeout(() => giveUp.abort(), timeoutMs);
  let last: unknown;
  try {
    while (!giveUp.signal.aborted) {
      let hit: E | undefined;
      try {
        const res = await fetch(`${daemon.url}/v1/agents/${agentId}/events/stream?after=${after}`, {
          headers: { authorization: `Bearer ${daemon.token}` },
          signal: giveUp.signal,
        });
        if (!res.ok) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
        await readSse(res, (f) => {
          if (f.event !== "event") return false;
          const e = JSON.parse(f.data) as E;
          after = e.seq;
          if (!match(e)) return false;
          hit = e;
          return true;
        });
      } catch (err) {
        if (!giveUp.signal.aborted) last = err;
      }
      if (hit) return hit;
      if (Date.now() + retryMs >= deadline) break;
      await new Promise((r) => setTimeout(r, retryMs));
    }
    throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ""}`);
  } finally {
    clearTimeout(timer);
  }
}
