import { WardrikError } from "@wardrik/protocol";
import type { AgentDefinition } from "../config/types.js";
import type { AgentRow } from "../store/rows.js";
import { STATE_FORMAT } from "../store/state-error.js";
import { TurnStop } from "./engine-options.js";
import type { Runtime } from "./runtime.js";
import { endOpenTurn } from "./turn-moves.js";

export interface FileAgent {
  name: string;
  file: string;
  definition?: AgentDefinition;
  error?: string;
}

export interface SyncReport {
  added: string[];
  updated: string[];
  removed: string[];
  unreadable: string[];
}

/**
 * Brings the file agents of `org` in line with agents/: add, update, mark
 * unreadable, remove. One node at a time (nodes of a cluster start together
 * and read the same agents/): the next one finds the work done.
 */
export function syncFileAgents(rt: Runtime, org: string, entries: FileAgent[]): Promise<SyncReport> {
  return rt.store.agents.syncing(org, () => syncNow(rt, org, entries));
}

async function syncNow(rt: Runtime, org: string, entries: FileAgent[]): Promise<SyncReport> {
  const report: SyncReport = { added: [], updated: [], removed: [], unreadable: [] };
  const existing = new Map((await rt.store.agents.list(org)).filter((a) => a.source === "file").map((a) => [a.name, a]));
  for (const entry of entries) {
    const prior = existing.get(entry.name);
    existing.delete(entry.name);
    const definition = entry.definition ? JSON.stringify(entry.definition) : null;
    if (prior && prior.definition === definition && (prior.reason ?? null) === (entry.error ?? null)) continue;
    const conflict = !prior ? await rt.store.agents.byName(org, entry.name) : undefined;
    if (conflict) {
      rt.opts.log("warn", `agents/${entry.name}.md is ignored: an agent named ${entry.name} was created through the API`, {});
      continue;
    }
    const id = prior?.id ?? rt.store.ids.next("agent");
    const status = entry.error ? "unreadable" : prior && prior.status !== "unreadable" ? prior.status : "idle";
    const written = await rt.store.tx(async (w) => {
      if (!prior) {
        const added = await rt.store.agents.insert(w, {
          id,
          org,
          name: entry.name,
          source: "file",
          definition,
          file: entry.file,
          status,
          reason: entry.error ?? null,
        });
        // Made through the API between the look-up and now: that agent keeps the name.
        if (!added) return false;
      } else {
        await rt.store.agents.redefine(w, id, { definition, file: entry.file, status, reason: entry.error ?? null });
      }
      const ref = { id, org };
      if (entry.error) w.emit(ref, "agent.unreadable", { name: entry.name, file: entry.file, reason: entry.error });
      else w.emit(ref, prior ? "agent.updated" : "agent.loaded", { name: entry.name, file: entry.file, definition: entry.definition });
      return true;
    }, org);
    if (!written) {
      // Another node registered it meanwhile (it took the sync over from this one, frozen past its lock): nothing to say.
      if ((await rt.store.agents.byName(org, entry.name))?.source !== "file")
        rt.opts.log("warn", `agents/${entry.name}.md is ignored: an agent named ${entry.name} was created through the API`, {});
      continue;
    }
    (entry.error ? report.unreadable : prior ? report.updated : report.added).push(entry.name);
    const driver = rt.awake(id);
    if (driver && entry.definition) driver.redefine(entry.definition);
    if (entry.error && driver) await rt.dropDriver(id);
    if (entry.definition && (!prior || prior.status === "unreadable")) await rt.resume(id);
  }
  for (const gone of existing.values()) {
    await remove(rt, gone);
    report.removed.push(gone.name);
  }
  return report;
}

export async function createAgent(rt: Runtime, org: string, def: AgentDefinition): Promise<AgentRow> {
  if (await rt.store.agents.byName(org, def.name)) {
    throw nameTaken(org, def.name);
  }
  const id = rt.store.ids.next("agent");
  const added = await rt.store.tx(async (w) => {
    const fresh = await rt.store.agents.insert(w, {
      id,
      org,
      name: def.name,
      source: "api",
      definition: JSON.stringify(def),
      file: null,
      status: "idle",
      reason: null,
    });
    if (fresh) w.emit({ id, org }, "agent.loaded", { name: def.name, source: "api", definition: def });
    return fresh;
  }, org);
  if (!added) throw nameTaken(org, def.name);
  return (await rt.store.agents.get(id))!;
}

export async function removeAgent(rt: Runtime, agent: AgentRow): Promise<void> {
  if (agent.source === "file") {
    throw new WardrikError(
      "conflict",
      `Agent ${agent.name} comes from ${agent.file ?? "agents/"}; delete the file and run wardrik reload instead.`,
    );
  }
  await remove(rt, agent);
}

/** Stops an agent, ends its open turns, and deletes its live data; its events stay in the record. */
async function remove(rt: Runtime, agent: AgentRow): Promise<void> {
  await rt.dropDriver(agent.id, new TurnStop("cancelled"));
  await rt.tools.release({ org: agent.org, agentId: agent.id });
  const ref = { id: agent.id, org: agent.org };
  await rt.store.tx(async (w) => {
    for (const t of await rt.store.turns.open(agent.id, w)) {
      await endOpenTurn(w, rt.store, ref, t, "cancel", { reason: "The agent was removed.", code: "agent_removed" });
    }
    w.emit(ref, "agent.removed", { name: agent.name });
    w.afterFlush((tx) => rt.store.agents.deleteWithData(tx, agent.id));
  }, agent.org);
}

function nameTaken(org: string, name: string): WardrikError {
  return new WardrikError("conflict", `An agent named ${name} already exists in org ${org}; pick another name.`);
}

export function readDefinition(row: AgentRow): AgentDefinition {
  if (row.status === "unreadable" || !row.definition) {
    throw new WardrikError("unreadable", `Agent ${row.name} is unreadable: ${row.reason ?? "no usable definition"}`);
  }
  if (row.format > STATE_FORMAT) {
    throw new WardrikError(
      "unreadable",
      `Agent ${row.name} was saved by a newer Wardrik (state format ${row.format}; this one reads up to ${STATE_FORMAT}).`,
    );
  }
  try {
    return JSON.parse(row.definition) as AgentDefinition;
  } catch (err) {
    throw new WardrikError("unreadable", `Agent ${row.name}'s saved definition cannot be read: ${(err as Error).message}`);
  }
}
