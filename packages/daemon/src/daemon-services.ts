import type { Server } from "node:http";
import { advertisedUrl } from "./cluster/advertised-url.js";
import type { DaemonParts } from "./daemon-parts.js";
import { localUrl, writeDaemonFile } from "./daemon-file.js";
import { listen } from "./http/server.js";
import type { Logger } from "./log/index.js";
import { warmProviderPackages } from "./models/provider-packages.js";
import { onOptionalModuleLoaded } from "./optional-modules.js";
import type { Service } from "./service-list.js";
import { VERSION } from "./version.js";

/** Where the API listens, known once the `http` service started. */
export interface Listening {
  url: string;
  port: number;
}

/**
 * The daemon's services, in the order they start; they stop in reverse. So
 * at shutdown the daemon first takes no new requests, then stops deliveries
 * and triggers, then turns (at a safe point) and hands its agents over, and
 * only then lets go of workers, MCP servers, open connections and the
 * database. A new part with a life of its own is one more entry here.
 */
export function daemonServices(
  parts: DaemonParts,
  o: { dir: string; host: string; port: number; log: Logger; listening: Listening },
): Service[] {
  const { config, opened, runtime, node, workers, eventsIO, observed, oauth, log, listening } = { ...parts, ...o };
  let server: Server | undefined;
  let closed: Promise<void> | undefined;
  let stopLoadLog = () => {};
  let removeDaemonFile = () => {};
  return [
    {
      // Packages a project may not use load on first use; `--log-level debug` shows which did, and why (until close).
      name: "module-log",
      start: () => void (stopLoadLog = onOptionalModuleLoaded((load) => log("debug", "optional module loaded", { ...load }))),
      stop: () => stopLoadLog(),
    },
    // Opened before everything else was built (the project's config lives next to it); closed last.
    { name: "database", stop: async () => (await opened.db.close(), opened.lock?.release()) },
    // Metrics are served before the API; spans of the turns that stopped, and any still buffered, go out before the database closes.
    { name: "telemetry", start: () => observed.listen(log), stop: () => observed.close() },
    { name: "agents", start: async () => void (await parts.syncAgents("start")) },
    {
      // After the MCP servers and workers let go, what is still connected (event streams, an `ask`) is closed.
      name: "http",
      start: async () => {
        server = await listen(parts.app, o.host, o.port, parts.httpOptions);
        const addr = server.address();
        listening.port = typeof addr === "object" && addr ? addr.port : config.listen.port;
        listening.url = `http://${o.host}:${listening.port}`;
      },
      stop: async () => {
        if (!server) return;
        closed ??= new Promise<void>((resolve) => server?.close(() => resolve()));
        server.closeAllConnections();
        await Promise.race([closed, new Promise((r) => setTimeout(r, 1000).unref())]);
      },
    },
    {
      name: "mcp",
      stop: async () => {
        log("info", "shutdown: stopping MCP servers");
        await Promise.all(parts.mcpServers.map((mcp) => mcp.close()));
      },
    },
    { name: "workers", stop: async () => (log("info", "shutdown: telling workers the daemon is going away"), await workers.close()) },
    { name: "slack", start: () => parts.slack?.start(), stop: () => parts.slack?.close() },
    {
      // One service: the node's loops take over agents only once this node's own turns recovered, and
      // hand them to other nodes at once only after they stopped. In a cluster, agents other live nodes drive stay theirs.
      name: "turns",
      start: async () => {
        await runtime.recover({ recount: !node.clustered });
        await node.start(runtime, advertisedUrl(config.cluster?.advertise, o.host, listening.port));
      },
      stop: async () => {
        log("info", "shutdown: stopping turns at a safe point");
        await runtime.close();
        await node.close(true);
      },
    },
    {
      // Deliveries are sent, and schedules (with those missed while no daemon ran) fire.
      name: "events",
      start: () => eventsIO.start(),
      stop: async () => (log("info", "shutdown: stopping webhook deliveries and triggers"), await eventsIO.close()),
    },
    {
      // The daemon says where it listens; at shutdown it first takes no new requests.
      name: "intake",
      start: () => {
        const { url, port } = listening;
        opened.lock?.describe({ url });
        // Where this daemon listens, for the CLI and workers of the project (also with --port).
        const file = { url: localUrl(o.host, port), node: node.node, version: VERSION, started: new Date().toISOString() };
        removeDaemonFile = writeDaemonFile(o.dir, file, (message) => log("warn", message));
        // The OAuth callback follows the address the daemon listens on; remote servers say now whether they want a login.
        oauth.setDaemonUrl(url);
        void oauth.probeUnknown();
        // The provider packages of the models agents name load now, rather than in their first turn.
        warmProviderPackages(parts.project.resolvedModels(), log);
        // Tools and tests find the address in this line's text, JSON or not.
        log("info", `wardrik daemon listening on ${url} (org ${config.org})`, {
          url,
          org: config.org,
          // A postgres URL may carry a password.
          database: config.database.replace(/\/\/([^:/@]*):[^@/]*@/, "//$1:***@"),
        });
      },
      stop: () => {
        log("info", "shutdown: no new requests");
        closed = new Promise<void>((resolve) => server?.close(() => resolve()));
        server?.closeIdleConnections();
        removeDaemonFile();
      },
    },
  ];
}
