import type { Server } from "node:http";
import type { Script } from "@wardrik/testing/scripted-model";
import { ADMIN_TOKEN_FILE, ensureAdminToken } from "./admin-token.js";
import { DEFAULT_LEASE_SECONDS, type AgentDefinition, type McpServerEntry, type ProjectConfig } from "./config/index.js";
import { EventBus } from "./events/event-bus.js";
import { LiveDeltas } from "./events/live-deltas.js";
import { EventsIO } from "./events-io.js";
import { positiveNumber } from "./config/positive-number.js";
import { createLogger, resolveLogThreshold, type Logger } from "./log/index.js";
import { systemClock, ulidIds, type Clock } from "./ids.js";
import { warmProviderPackages } from "./models/provider-packages.js";
import { onOptionalModuleLoaded } from "./optional-modules.js";
import { decide, type CompiledPolicy } from "./policy/index.js";
import { loadProjectPolicies as loadPolicies } from "./policy/load-project-policies.js";
import { buildApp, listen } from "./http/server.js";
import type { ApiServices } from "./http/services.js";
import { describers } from "./http/describe.js";
import { Runtime } from "./runtime/runtime.js";
import { budgetCaps } from "./runtime/budget.js";
import { daemonReplay } from "./replay/daemon-replay.js";
import type { ResolvedModelRef, RuntimeHooks } from "./runtime/types.js";
import { SecretRedactor } from "./secrets/redactor.js";
import type { SlackService } from "./slack/slack-service.js";
import { loadSlack } from "./slack/load-slack.js";
import { advertisedUrl } from "./cluster/advertised-url.js";
import { nodeOwnership } from "./cluster/node-ownership.js";
import { clusterCallHost } from "./cluster/cluster-call-host.js";
import { localUrl, writeDaemonFile } from "./daemon-file.js";
import { openProject } from "./open-project.js";
import { ProjectAgents } from "./project-agents.js";
import { Store } from "./store/store.js";
import { FilesToolset } from "./tools/files-toolset.js";
import { toolPatternProblems } from "./tools/check-tool-patterns.js";
import { ToolRegistry } from "./tools/tool-registry.js";
import { VERSION } from "./version.js";
import type { WorkerGateway } from "./tools/workers/worker-gateway.js";
import { daemonWorkers } from "./daemon-workers.js";
import { McpOAuth, McpToolset } from "./tools/mcp/index.js";
import { McpServers } from "./tools/mcp/mcp-servers.js";
import { McpGrantStore } from "./store/mcp-grants.js";
import { WardrikMetrics } from "./metrics/wardrik-metrics.js";
import type { DaemonTracing } from "./telemetry/start-tracing.js";
import { startDaemonTelemetry } from "./telemetry/daemon-telemetry.js";

export { ADMIN_TOKEN_FILE, ensureAdminToken };

export type { Logger };

export interface DaemonOptions {
  /** Overrides config.yaml `listen` (0 picks a free port). */
  port?: number;
  host?: string;
  /** Default: JSON lines on stderr at WARDRIK_LOG_LEVEL (info when unset). */
  log?: Logger;
  /**
   * The redactor the daemon fills with every known secret value. Pass one to
   * also blank lines written around the daemon (give the same one to
   * createLogger's `redact`); by default the daemon makes its own.
   */
  redactor?: SecretRedactor;
  toolTimeoutMs?: number;
  scripts?: Record<string, Script>;
  env?: NodeJS.ProcessEnv;
  clock?: Clock;
  synchronous?: "NORMAL" | "FULL";
  /** This node's name in a cluster (`wardrik daemon --node NAME`); default the host name and port. */
  node?: string;
}

export interface Daemon {
  url: string;
  /** This daemon's node name. */
  node: string;
  config: ProjectConfig;
  store: Store;
  runtime: Runtime;
  workers: WorkerGateway;
  close(): Promise<void>;
}

export async function startDaemon(dir: string, options: DaemonOptions = {}): Promise<Daemon> {
  const env = options.env ?? process.env;
  // Every known secret value, blanked from logs, tool outcomes, MCP messages and events.
  const redactor = options.redactor ?? new SecretRedactor();
  const rawLog = options.log ?? createLogger({ level: resolveLogThreshold(undefined, env) });
  // While traces are exported, a line about a turn (its `run`) names the turn's trace; one that names its own span keeps it.
  let traceFields: DaemonTracing["logFields"] = () => undefined;
  const log: Logger = (level, msg, fields) => {
    const trace = traceFields(fields);
    const all = trace ? { ...trace, ...fields } : fields;
    rawLog(level, redactor.redact(msg), all && redactor.redactValue(all));
  };
  const { db, lock, config, secrets, serverCredentials } = await openProject(dir, {
    ...{ env, redactor, log, node: options.node },
    synchronous: options.synchronous ?? "NORMAL",
  });
  // Packages a project may not use load on first use; `--log-level debug` shows which did, and why (until close).
  const stopLoadLog = onOptionalModuleLoaded((load) => log("debug", "optional module loaded", { ...load }));
  const slack = config.slack
    ? await loadSlack().catch(async (err: unknown) => {
        await db.close();
        lock?.release();
        throw err;
      })
    : undefined;
  const token = ensureAdminToken(dir);
  const clock = options.clock ?? systemClock;
  const bus = new EventBus();
  const ids = ulidIds(clock);
  // Webhook subscribers and triggers: deliveries and event firings commit with their events.
  const metrics = new WardrikMetrics();
  const eventsIO = new EventsIO({
    ...{ config, db, ids, clock, log, redactor, secrets, env, userAgent: `wardrik/${VERSION}` },
    onDeliveryAttempt: (outcome, possibleRepeat) => metrics.webhookDelivery(outcome, possibleRepeat),
  });
  // Events and stored messages carry no known secret value.
  const store = new Store(db, bus, ids, clock, {
    redact: (data, org) => redactor.forOrg(org).redactValue(data),
    onEventsWritten: eventsIO.onEventsWritten,
    onCommit: metrics.commitTook,
  });
  await store.tokens.add(config.org, "admin", token, true, clock.now().toISOString());

  const policies = loadPolicies(dir, log);
  // Agent files and the models they name; each model's provider package loads once the daemon listens.
  const project = new ProjectAgents({ dir, config, env, scripts: options.scripts, policies, redactor });
  const modelFor = (ref: string): ResolvedModelRef => project.modelFor(ref);
  const policyOf = (def: AgentDefinition): CompiledPolicy | undefined => {
    const name = def.policy ?? config.policy;
    if (!name) return undefined;
    const p = policies.get(name);
    return p && !("error" in p) ? p.compiled : undefined;
  };

  // Made once the runtime exists; replies stream into Slack threads from the first delta on.
  const integrations: { slack?: SlackService } = {};
  const deltas = new LiveDeltas(redactor, (run, text, reset) => integrations.slack?.onDelta(run, text, reset));
  const hooks: RuntimeHooks = {
    resolveModel: (ref, def) => {
      const r = ref ?? config.model;
      if (!r) throw new Error(`Agent ${def.name} names no model, and config.yaml sets no default model.`);
      return modelFor(r);
    },
    decide: (call) => decide(policyOf(call.agent), { tool: call.tool, args: call.args, readOnly: call.readOnly }),
    budget: (def) => {
      const name = def.policy ?? config.policy;
      const p = name ? policies.get(name) : undefined;
      return budgetCaps(p && !("error" in p) ? p.policy.budget : undefined, def.budget);
    },
    onDelta: (agent, run, text, reset, retry) => deltas.delta(agent, run, text, reset, retry),
    onDeltaEnd: (agent, run, ok) => deltas.end(agent.id, run, ok),
  };

  const unusableMcp = (name: string) => {
    const why = config.unusable?.[`mcp.${name}`];
    return why === undefined ? {} : { unusable: why };
  };
  // config.yaml's servers (its org's, and those `orgs:` grants) and each org's own (orgs.ORG.mcp), with the org each belongs to.
  const mcpEntries: [string, McpServerEntry, string][] = [
    ...Object.entries(config.mcp).map(([name, entry]): [string, McpServerEntry, string] => [name, entry, config.org]),
    ...Object.entries(config.orgs ?? {}).flatMap(([org, part]) =>
      Object.entries(part.mcp).map(([name, entry]): [string, McpServerEntry, string] => [name, entry, org]),
    ),
  ];
  const registry = new ToolRegistry({ redactor });
  registry.add(new FilesToolset(db, clock));
  const node = await nodeOwnership(db, store, bus, {
    node: options.node,
    port: options.port ?? config.listen.port,
    leaseSeconds: config.cluster?.lease ?? DEFAULT_LEASE_SECONDS,
    log,
    keyRing: () => secrets.keyRing,
  });
  // config.yaml `worker_grace`: calls to a worker tool wait this long after a start or takeover for workers to reconnect.
  const reconnectGraceMs = config.worker_grace * 1000;
  const { workers, attach: attachWorkers } = daemonWorkers(
    { store, node, redactor, log },
    { workerGraceMs: reconnectGraceMs, maxJsonDepth: config.limits.json_depth },
  );
  registry.add(workers);
  // OAuth grants of remote MCP servers, per org; every stored token joins the redactor here.
  const oauth = new McpOAuth({
    grants: new McpGrantStore(db, secrets),
    redactor,
    log,
    homeOrg: config.org,
    // A server given a secret that cannot be decrypted is never started, nor asked whether it wants a login.
    servers: Object.fromEntries(mcpEntries.filter(([name]) => !unusableMcp(name).unusable).map(([name, entry]) => [name, entry])),
    now: () => clock.now().getTime(),
  });
  await oauth.load();
  // One namespace per MCP server; each starts when an awake agent first needs it.
  const mcpServers = mcpEntries.map(
    ([name, entry, home]) =>
      new McpToolset(name, entry, {
        homeOrg: home,
        ...{ log, cwd: config.dir, redactor, oauth, jsonDepth: config.limits.json_depth },
        credentials: serverCredentials.get(name) ?? [],
        ...unusableMcp(name),
      }),
  );
  for (const mcp of mcpServers) registry.add(mcp);

  // config.yaml `tool_timeout` (seconds, default 60); WARDRIK_TOOL_TIMEOUT_MS overrides it in tests of a spawned daemon.
  const toolTimeoutMs = options.toolTimeoutMs ?? positiveNumber(env.WARDRIK_TOOL_TIMEOUT_MS) ?? config.tool_timeout * 1000;
  const observed = await startDaemonTelemetry(config.telemetry, env, {
    ...{ store, bus, log, metrics, version: VERSION, node: node.node },
    redact: (t) => redactor.redact(t),
    addSecret: (value) => redactor.add(value, undefined, config.org),
    workerConnections: () => workers.connectionsByOrg(),
  }).catch(async (err: unknown) => {
    await workers.close();
    await db.close();
    lock?.release();
    throw err;
  });
  traceFields = observed.tracing.logFields;
  const runtime = new Runtime(store, registry, hooks, {
    ...{ log, toolTimeoutMs, reconnectGraceMs, jsonDepth: config.limits.json_depth },
    ownership: node.ownership,
    telemetry: observed.tracing.telemetry,
    orgRunningTurns: config.limits.org_running_turns,
  });
  attachWorkers(runtime);
  eventsIO.attach(store, runtime, bus);
  if (slack && config.slack)
    integrations.slack = slack.slackService(config.slack, config.org, { store, runtime, bus, log, node: node.node, env, metrics });

  /**
   * Loads agents/ (and scripts/ again), saying in the log what keeps an agent from working: an unreadable
   * file (at start every one, on reload those that changed), a model without an API key, tool patterns
   * that match nothing. Reload's answer says the same.
   */
  const syncAgents = async (at: "start" | "reload") => {
    const known = await secrets.readable(config.org);
    const { agents, modelWarnings } = project.read({
      secret: (name) => known.values.get(name),
      unreadableSecret: (name) => known.unreadable.get(name),
    });
    const result = await runtime.syncFileAgents(config.org, agents);
    const warnings = agents.flatMap((a) =>
      a.definition ? toolPatternProblems(a.definition.tools ?? [], registry, config.org).map((p) => ({ agent: a.name, ...p })) : [],
    );
    const unreadable = agents.filter((a) => a.error !== undefined && (at === "start" || result.unreadable.includes(a.name)));
    for (const a of unreadable) log("warn", `agent ${a.name} is unreadable: ${a.error}`, { agent: a.name, file: a.file });
    for (const w of modelWarnings) log("warn", `agent ${w.agent} cannot call its model: ${w.reason}`, { agent: w.agent, model: w.model });
    for (const w of warnings) log("warn", "tool pattern matches nothing", w);
    return {
      ...result,
      warnings,
      model_warnings: modelWarnings,
      unreadable_reasons: unreadable.map((a) => ({ agent: a.name, reason: a.error! })),
    };
  };

  const svc: ApiServices = {
    // Other nodes' calls for the workers connected here: signed with the node key, and on the record.
    ...(node.clustered ? { cluster: clusterCallHost(store, () => secrets.keyRing, workers) } : {}),
    org: config.org,
    leaseMs: (config.cluster?.lease ?? DEFAULT_LEASE_SECONDS) * 1000,
    secrets,
    store,
    runtime,
    bus,
    events: { deliveries: eventsIO.admin, acceptWebhook: (req) => eventsIO.acceptWebhook(req) },
    slack: integrations.slack,
    reload: () => syncAgents("reload"),
    replay: daemonReplay({ store, registry, config, env, scripts: options.scripts, policies, toolTimeoutMs, clock, log, redactor }),
    ...describers({ store, registry, hooks, runtime, triggers: (r) => eventsIO.describeTriggers(r), policy: (d) => policyOf(d)?.policy }),
    mcp: new McpServers(mcpServers, oauth),
    onDelta: (agentId, listener) => deltas.subscribe(agentId, listener),
  };

  await syncAgents("start");

  const httpOpts = {
    authenticate: (t: string) => store.tokens.authenticate(t),
    upgrades: {
      "/v1/workers": (
        req: Parameters<WorkerGateway["handleUpgrade"]>[0],
        socket: Parameters<WorkerGateway["handleUpgrade"]>[1],
        head: Buffer,
      ) => workers.handleUpgrade(req, socket, head),
    },
    log,
    metrics: () => metrics.render(),
    orgRequestsPerS: config.limits.org_requests_per_s,
    jsonDepth: config.limits.json_depth,
  };
  const { app } = buildApp(svc, httpOpts);
  // Nothing ran yet when a listen fails (the metrics address, then the API's): give back the database (and its lock) before saying why.
  const abandon = async () => {
    await runtime.close();
    await observed.close();
    await workers.close();
    await db.close();
    lock?.release();
  };
  let server: Server;
  try {
    await observed.listen(log);
    server = await listen(app, options.host ?? config.listen.host, options.port ?? config.listen.port, httpOpts);
  } catch (err) {
    await abandon();
    throw err;
  }
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : config.listen.port;
  const url = `http://${options.host ?? config.listen.host}:${port}`;
  // Recover once the server listens, so workers can reconnect while turns resume. In a cluster, agents
  // other live nodes drive stay theirs; the node's loops take over those whose owner died.
  await runtime.recover({ recount: !node.clustered });
  await node.start(runtime, advertisedUrl(config.cluster?.advertise, options.host ?? config.listen.host, port));
  // Then deliveries are sent, and schedules (with those missed while no daemon ran) fire.
  await eventsIO.start();
  if (slack && integrations.slack) await slack.startSlack(integrations.slack, config, store, log);
  lock?.describe({ url });
  // Where this daemon listens, for the CLI and workers of the project (also with --port).
  const removeDaemonFile = writeDaemonFile(
    dir,
    { url: localUrl(options.host ?? config.listen.host, port), node: node.node, version: VERSION, started: new Date().toISOString() },
    (message) => log("warn", message),
  );
  // The OAuth callback follows the address the daemon listens on; remote servers say now whether they want a login.
  oauth.setDaemonUrl(url);
  void oauth.probeUnknown();
  // The provider packages of the models agents name load now, rather than in their first turn.
  warmProviderPackages(project.resolvedModels(), log);
  // Tools and tests find the address in this line's text, JSON or not.
  log("info", `wardrik daemon listening on ${url} (org ${config.org})`, {
    url,
    org: config.org,
    // A postgres URL may carry a password.
    database: config.database.replace(/\/\/([^:/@]*):[^@/]*@/, "//$1:***@"),
  });

  let closing: Promise<void> | undefined;
  return {
    url,
    node: node.node,
    config,
    store,
    runtime,
    workers,
    close: () =>
      (closing ??= (async () => {
        // Whatever is connected (workers, MCP servers, event streams, ask clients), the daemon stops in a few seconds:
        // every turn's state is durable, so stopping at any safe point loses nothing.
        log("info", "shutdown: no new requests");
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        log("info", "shutdown: stopping webhook deliveries and triggers");
        await eventsIO.close();
        log("info", "shutdown: stopping turns at a safe point");
        await runtime.close();
        await integrations.slack?.close();
        // Its agents go to the other nodes at once, rather than after the lease.
        await node.close(true);
        // Spans of the turns that just stopped, and any still buffered, go out before the database closes.
        await observed.close();
        log("info", "shutdown: telling workers the daemon is going away");
        await workers.close();
        log("info", "shutdown: stopping MCP servers");
        await Promise.all(mcpServers.map((mcp) => mcp.close()));
        server.closeAllConnections();
        await Promise.race([closed, new Promise((r) => setTimeout(r, 1000).unref())]);
        await db.close();
        lock?.release();
        removeDaemonFile();
        stopLoadLog();
        log("info", "shutdown: done");
      })()),
  };
}
