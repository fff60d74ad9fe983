/**
 * A loopback HTTP proxy between a client (`wardrik ask`) and the daemon that
 * can spoil the answer to the next `POST .../messages` on purpose: lose it
 * (the daemon did the work, the client's connection breaks) or hold it back
 * for a while. Everything else, event streams included, passes through.
 * Closes by itself after the file (or the test of `scope`).
 */
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { cleanupLater, type TestScope } from "./spawn-daemon.js";

export interface FaultProxy {
  /** http://127.0.0.1:PORT, for WARDRIK_URL. */
  url: string;
  /** The next message POST runs on the daemon, but its answer is dropped; then `after` runs. */
  loseNextAnswer(after: () => Promise<void>): void;
  /** The next message POST's answer reaches the client `ms` later than the daemon gave it. */
  delayNextAnswer(ms: number): void;
  /** Answers lost so far. */
  lost: number;
  close(): Promise<void>;
}

type Fault = { kind: "lose"; after: () => Promise<void> } | { kind: "delay"; ms: number };

/** `target()`: the daemon's current URL (it may change across restarts). */
export async function startFaultProxy(target: () => string, scope?: TestScope): Promise<FaultProxy> {
  let next: Fault | undefined;
  const proxy: FaultProxy = {
    url: "",
    lost: 0,
    loseNextAnswer(after) {
      next = { kind: "lose", after };
    },
    delayNextAnswer(ms) {
      next = { kind: "delay", ms };
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  const server: Server = createServer((req, res) => {
    const fault = next !== undefined && req.method === "POST" && /\/messages$/.test(req.url ?? "") ? next : undefined;
    if (fault) next = undefined;
    const up = request(new URL(req.url ?? "/", target()), { method: req.method, headers: req.headers }, (upRes) => {
      if (fault?.kind === "lose") {
        upRes.resume();
        upRes.on("end", () => {
          proxy.lost += 1;
          req.socket.destroy();
          void fault.after();
        });
        return;
      }
      const pass = () => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
      };
      upRes.on("error", () => res.destroy());
      upRes.on("aborted", () => res.destroy());
      if (fault?.kind === "delay") {
        upRes.pause();
        setTimeout(pass, fault.ms);
      } else pass();
    });
    // A daemon that is down looks like one: the client's connection breaks.
    up.on("error", () => req.socket.destroy());
    res.on("close", () => up.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  cleanupLater(() => proxy.close(), scope);
  return proxy;
}
