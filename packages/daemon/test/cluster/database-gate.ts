/**
 * A starting line for nodes started together: a loopback TCP proxy in front
 * of the PostgreSQL server that holds every connection it accepts until each
 * of the expected nodes has opened one (a node names itself in its startup
 * message's application_name, `wardrik NODE`), then lets them all through at
 * once. Everything a node does first on an empty database (migrating it,
 * creating the secret key and the admin token, registering the agents) comes
 * after its first connection, so the nodes then race on it within the same
 * millisecond, whatever the time each took to load its modules.
 *
 * Should a node not connect within `timeoutMs` of the first one (it failed
 * earlier), the gate opens anyway, before the first one's connection times out
 * (30 s), and the test sees which nodes came. Loading a node's modules may take
 * many seconds on a busy machine, so the time counts from the first arrival.
 */
import { connect, createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";

export interface DatabaseGate {
  /** The database URL with the gate's address in place of the server's. */
  url: string;
  /** The nodes whose first connection arrived at the gate, in order. */
  arrived: string[];
  /** Why the gate opened: every node came, or the deadline passed (or the gate closed); undefined while it holds. */
  readonly opened: "all" | "deadline" | undefined;
  close(): Promise<void>;
}

/** application_name of a PostgreSQL startup message (length, protocol, then key\0value\0 pairs), once it is whole. */
function applicationName(buffered: Buffer): string | undefined {
  if (buffered.length < 8 || buffered.length < buffered.readInt32BE(0)) return undefined;
  const pairs = buffered.subarray(8, buffered.readInt32BE(0)).toString("utf8").split("\0");
  for (let i = 0; i + 1 < pairs.length; i += 2) if (pairs[i] === "application_name") return pairs[i + 1];
  return "";
}

/** A gate for `nodes` (node names) in front of the server of `databaseUrl`. */
export async function startDatabaseGate(databaseUrl: string, nodes: string[], timeoutMs = 20_000): Promise<DatabaseGate> {
  const target = new URL(databaseUrl);
  const held: { socket: Socket; buffered: Buffer }[] = [];
  const arrived: string[] = [];
  const sockets = new Set<Socket>();
  let opened: "all" | "deadline" | undefined;
  let deadline: NodeJS.Timeout | undefined;
  const pass = (socket: Socket, buffered: Buffer) => {
    const up = connect(Number(target.port), target.hostname);
    sockets.add(up);
    up.on("close", () => sockets.delete(up));
    up.on("error", () => socket.destroy());
    socket.on("error", () => up.destroy());
    up.write(buffered);
    socket.pipe(up).pipe(socket);
    socket.resume();
  };
  const release = (why: "all" | "deadline") => {
    if (opened) return;
    opened = why;
    if (deadline) clearTimeout(deadline);
    for (const h of held.splice(0)) pass(h.socket, h.buffered);
  };
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const name = applicationName(buffered);
      if (name === undefined) return;
      socket.off("data", onData);
      socket.pause();
      if (opened) return pass(socket, buffered);
      held.push({ socket, buffered });
      deadline ??= setTimeout(() => release("deadline"), timeoutMs);
      const node = name.replace(/^wardrik /, "");
      if (nodes.includes(node) && !arrived.includes(node)) arrived.push(node);
      if (nodes.every((n) => arrived.includes(n))) release("all");
    };
    socket.on("data", onData);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const url = new URL(databaseUrl);
  url.hostname = "127.0.0.1";
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    arrived,
    get opened() {
      return opened;
    },
    close: () =>
      new Promise<void>((resolve) => {
        release("deadline");
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
