/**
 * Nodes started together on an empty PostgreSQL database: every one comes up,
 * and the project's agents are registered once (one row, one agent.loaded
 * event each, the same ID on every node), and they agree on one admin token
 * and one secret key, which none had before (a secret stored through each
 * node opens with the key file they leave). Ten rounds of five nodes at once (the issue's count), each round on a
 * fresh database of the run's one server, behind a gate (database-gate.ts) that lets the nodes' first
 * connections through together: without it the nodes, loading their modules for a second or more
 * each on a busy machine, reached the database up to seconds apart, and it took ten rounds for a few
 * to overlap; with it every round races all five on the empty database.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { createProject } from "../helpers/spawn-daemon.js";
import { createTestDatabase } from "../helpers/test-database.js";
import { openDb } from "../../src/store/open-db.js";
import { SecretStore } from "../../src/store/secrets.js";
import { agentMarkdown, faultFiles, faultScript, AGENT } from "../faults/fault-agent.js";
import { api, eventsOf, short } from "../faults/fault-api.js";
import { clusterNode, type ClusterNode } from "./cluster-node.js";
import { startDatabaseGate } from "./database-gate.js";

const NODES = 5;
const ROUNDS = 10;
const MORE_AGENTS = ["a1", "a2", "a3"];

it(`${NODES} nodes started at once on an empty database all come up, ${ROUNDS} times`, { timeout: 600_000 }, async (ctx) => {
  const p = await createProject({
    start: false,
    config: (text) => `${text.replace(/\n?$/, "\n")}cluster:\n  lease: 2\n`,
    scripts: { [AGENT]: faultScript() },
    files: { ...faultFiles(), ...Object.fromEntries(MORE_AGENTS.map((n) => [`agents/${n}.md`, agentMarkdown()])) },
    remove: ["agents/helper.md"],
    scope: ctx,
  });
  const names = [AGENT, "probe", ...MORE_AGENTS].sort();
  const failures: string[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const database = await createTestDatabase({ scope: ctx });
    const nodes: ClusterNode[] = Array.from({ length: NODES }, (_, i) => clusterNode(p, `r${round}n${i + 1}`));
    const gate = await startDatabaseGate(
      database.url,
      nodes.map((n) => n.name),
    );
    const configPath = join(p.dir, "config.yaml");
    writeFileSync(configPath, readFileSync(configPath, "utf8").replace(/^database:.*$/m, `database: ${gate.url}`));
    // As in a folder no `wardrik init` made: the first daemons create the admin token and the secret key.
    rmSync(join(p.dir, ".wardrik", "admin-token"), { force: true });
    rmSync(join(p.dir, ".wardrik", "secret-key"), { force: true });
    try {
      const starts = await Promise.allSettled(nodes.map((n) => n.start()));
      if (gate.opened !== "all") failures.push(`round ${round}: only ${gate.arrived.join(",")} reached the database gate`);
      starts.forEach((s, i) => {
        if (s.status === "rejected") failures.push(`round ${round}: ${nodes[i]!.name} did not come up: ${String(s.reason).slice(0, 400)}`);
      });
      const up = nodes.filter((n) => n.alive);
      for (const n of up) {
        const listed = await api<{ agents: { id: string; name: string }[] }>(n, "GET", "/v1/agents");
        const seen = listed.agents.map((a) => a.name).sort();
        if (JSON.stringify(seen) !== JSON.stringify(names)) failures.push(`round ${round}: ${n.name} lists ${seen.join(",")}`);
      }
      if (up[0]) {
        const listed = await api<{ agents: { id: string; name: string }[] }>(up[0], "GET", "/v1/agents");
        for (const a of listed.agents) {
          const loaded = (await eventsOf(up[0], a.id)).filter((e) => short(e.type) === "agent.loaded");
          if (loaded.length !== 1) failures.push(`round ${round}: agent ${a.name} has ${loaded.length} agent.loaded events`);
        }
      }
      for (const n of up) await api(n, "POST", `/v1/secrets/s_${n.name}`, { value: `from ${n.name}` });
      const db = await openDb(database.url);
      try {
        const stored = await new SecretStore(db, join(p.dir, ".wardrik", "secret-key"), { env: {} }).everything();
        if (stored.values.length !== up.length)
          failures.push(`round ${round}: ${stored.values.length} of ${up.length} secrets open with the key file`);
      } finally {
        await db.close();
      }
    } finally {
      await Promise.all(nodes.map((n) => n.kill()));
      await gate.close();
    }
    await database.drop();
  }
  expect(failures).toEqual([]);
});
