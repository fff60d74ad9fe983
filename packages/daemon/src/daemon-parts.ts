import type { Hono } from "hono";
import type { Script } from "@wardrik/testing/scripted-model";
import { ensureAdminToken } from "./admin-token.js";
import { DEFAULT_LEASE_SECONDS, type AgentDefinition, type McpServerEntry, type ProjectConfig } from "./config/index.js";
import { intervalMs, positiveNumber } from "./config/positive-number.js";
import { EventBus } from "./events/event-bus.js";
import { LiveDeltas } from "./events/live-deltas.js";
import { EventsIO } from "./events-io.js";
import type { Logger } from "./log/index.js";
import { ulidIds, type Clock } from "./ids.js";
import { decide, type CompiledPolicy } from "./policy/index.js";
import { loadProjectPolicies as loadPolicies } from "./policy/load-project-policies.js";
import { buildApp } from "./http/server.js";
import type { ApiServices } from "./http/services.js";
import { describers } from "./http/describe.js";
import { Runtime } from "./runtime/runtime.js";
import { budgetCaps } from "./runtime/budget.js";
import { daemonReplay } from "./replay/daemon-replay.js";
import type { ResolvedModelRef, RuntimeHooks } from "./runtime/types.js";
import type { SecretRedactor } from "./secrets/redactor.js";
import type { SlackService } from "./slack/slack-service.js";
import { loadSlack } from "./slack/load-slack.js";
import { nodeOwnership, type NodeOwnership } from "./cluster/node-ownership.js";
import { clusterCallHost } from "./cluster/cluster-call-host.js";
import type { OpenedProject } from "./open-project.js";
import { ProjectAgents } from "./project-agents.js";
import { Store } from "./store/store.js";
import { FilesToolset } from "./tools/files-toolset.js";
import { PersonToolset } from "./tools/person-toolset.js";
import { AgentsToolset } from "./tools/agents-toolset.js";
import { subAgentHost } from "./runtime/sub-agent-call.js";
import { toolPatternProblems } from "./tools/check-tool-patterns.js";
import { ToolRegistry } from "./tools/tool-registry.js";
import { VERSION } from "./version.js";
import type { WorkerGateway } from "./tools/workers/worker-gateway.js";
import { daemonWorkers } from "./daemon-workers.js";
import { McpOAuth, McpToolset } from "./tools/mcp/index.js";
import { McpServers } from "./tools/mcp/mcp-servers.js";
import { McpGrantStore } from "./store/mcp-grants.js";
import { WardrikMetrics } from "./metrics/wardrik-metrics.js";
import { startDaemonTelemetry, type DaemonTelemetry } from "./telemetry/daemon-telemetry.js";
import type { ApiEnv } from "./http/api-env.js";
import type { HttpOptions } from "./http/http-options.js";

/** What assembling needs besides the opened project: the daemon's options, and the log and redactor already made. */
export interface AssemblyInputs {
  dir: string;
  env: NodeJS.ProcessEnv;
  redactor: SecretRedactor;
  log: Logger;
  clock: Clock;
  scripts?: Record<string, Script>;
  toolTimeoutMs?: number;
  node?: string;
  port?: number;
}

/** The daemon's parts, built and wired to each other, none of them started (the services in daemon-services.ts start them). */
export interface DaemonParts {
  opened: OpenedProject;
  config: ProjectConfig;
  store: Store;
  bus: EventBus;
  node: NodeOwnership;
  workers: WorkerGateway;
  mcpServers: McpToolset[];
  oauth: McpOAuth;
  observed: DaemonTelemetry;
  runtime: Runtime;
  eventsIO: EventsIO;
  project: ProjectAgents;
  slack?: { start(): Promise<void>; close(): Promise<void> };
  app: Hono<ApiEnv>;
  httpOptions: HttpOptions;
  /** Loads agents/ (see syncAgents below); at start, and on every reload. */
  syncAgents(at: "start" | "reload"): ReturnType<ApiServices["reload"]>;
}

/** Builds every part of the daemon on the opened project and wires them together; nothing runs yet. */
export async function assembleDaemon(opened: OpenedProject, i: AssemblyInputs): Promise<DaemonParts> {
  const { db, config, secrets, serverCredentials } = opened;
  const { dir, env, redactor, log, clock } = i;
  const slackModule = config.slack ? await loadSlack() : undefined;
  const token = ensureAdminToken(dir);
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
  const project = new ProjectAgents({ dir, config, env, scripts: i.scripts, policies, redactor });
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
  registry.add(new PersonToolset());
  // agents/NAME: runs a turn of another agent; it needs the runtime, attached once that exists.
  const agentsToolset = new AgentsToolset();
  registry.add(agentsToolset);
  const node = await nodeOwnership(db, store, bus, {
    node: i.node,
    port: i.port ?? config.listen.port,
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
  const toolTimeoutMs = i.toolTimeoutMs ?? positiveNumber(env.WARDRIK_TOOL_TIMEOUT_MS) ?? config.tool_timeout * 1000;
  const observed = await startDaemonTelemetry(config.telemetry, env, {
    ...{ store, bus, log, metrics, version: VERSION, node: node.node },
    redact: (t) => redactor.redact(t),
    addSecret: (value) => redactor.add(value, undefined, config.org),
    workerConnections: () => workers.connectionsByOrg(),
  });
  const runtime = new Runtime(store, registry, hooks, {
    ...{ log, toolTimeoutMs, reconnectGraceMs, jsonDepth: config.limits.json_depth },
    // How often idle agents are put to sleep (default every second); tests of a spawned daemon look more often.
    sleepCheckMs: intervalMs(env.WARDRIK_SLEEP_CHECK_MS),
    ownership: node.ownership,
    telemetry: observed.tracing.telemetry,
    orgRunningTurns: config.limits.org_running_turns,
  });
  attachWorkers(runtime);
  agentsToolset.attach(subAgentHost(runtime, bus));
  eventsIO.attach(store, runtime, bus);
  const slackService = slackModule && config.slack;
  if (slackService)
    integrations.slack = slackModule.slackService(slackService, config.org, { store, runtime, bus, log, node: node.node, env, metrics });

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
    replay: daemonReplay({ store, registry, config, env, scripts: i.scripts, policies, toolTimeoutMs, clock, log, redactor }),
    ...describers({ store, registry, hooks, runtime, triggers: (r) => eventsIO.describeTriggers(r), policy: (d) => policyOf(d)?.policy }),
    mcp: new McpServers(mcpServers, oauth),
    onDelta: (agentId, listener) => deltas.subscribe(agentId, listener),
  };

  const httpOptions: HttpOptions = {
    authenticate: (t: string) => store.tokens.authenticate(t),
    upgrades: { "/v1/workers": (req, socket, head) => workers.handleUpgrade(req, socket, head) },
    log,
    metrics: () => metrics.render(),
    orgRequestsPerS: config.limits.org_requests_per_s,
    fairShare: runtime.opts.fairShare,
    jsonDepth: config.limits.json_depth,
  };
  const { app } = buildApp(svc, httpOptions);
  const slack =
    slackModule && slackService && integrations.slack
      ? {
          start: () => slackModule.startSlack(integrations.slack!, config, store, log),
          close: async () => integrations.slack?.close(),
        }
      : undefined;
  return {
    opened,
    config,
    store,
    bus,
    node,
    workers,
    mcpServers,
    oauth,
    observed,
    runtime,
    eventsIO,
    project,
    slack,
    app,
    httpOptions,
    syncAgents,
  };
}
