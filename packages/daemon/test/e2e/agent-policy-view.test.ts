/**
 * `GET /v1/agents/{id}` and `wardrik agent show --json` show the policy that
 * decides the agent's calls, rule by rule with where each is written: the
 * agent's own, else config.yaml's.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { agentFile, createProject, type TestProject } from "../helpers/spawn-daemon.js";

const CAREFUL = `description: Refunds need a person.
rules:
  - tool: workers/refund
    when: { amount: { gt: 100 } }
    decision: ask
    reason: Large refunds need a person.
  - tool: files/*
    decision: allow
budget:
  per_day_usd: 5
`;

let p: TestProject;
beforeAll(async () => {
  p = await createProject({
    files: {
      "policies/careful.yaml": CAREFUL,
      "agents/own.md": agentFile({ description: "Has its own policy", tools: ["files"], policy: "careful" }),
      "agents/plain.md": agentFile({ description: "No policy", tools: ["files"] }),
    },
  });
});

interface Detail {
  policy?: string;
  effective_policy?: {
    name: string;
    description?: string;
    rules: { tool: string; decision: string; when?: unknown; reason?: string; source?: string }[];
    budget?: { per_day_usd?: number };
  };
}

describe("an agent's policy, read only", () => {
  it("shows the agent's policy rule by rule, with conditions, reasons, sources and budget", async () => {
    const shown = JSON.parse((await p.cli(["agent", "show", "own", "--json"])).stdout) as Detail;
    expect(shown.policy).toBe("careful");
    expect(shown.effective_policy).toEqual({
      name: "careful",
      description: "Refunds need a person.",
      rules: [
        {
          tool: "workers/refund",
          decision: "ask",
          when: { amount: { gt: 100 } },
          reason: "Large refunds need a person.",
          source: "policies/careful.yaml:3",
        },
        { tool: "files/*", decision: "allow", source: "policies/careful.yaml:7" },
      ],
      budget: { per_day_usd: 5 },
    });
  });

  it("an agent that names no policy shows config.yaml's, which decides its calls", async () => {
    const shown = JSON.parse((await p.cli(["agent", "show", "plain", "--json"])).stdout) as Detail;
    expect(shown.policy).toBeUndefined();
    expect(shown.effective_policy?.name).toBe("default");
    expect(shown.effective_policy?.rules.length).toBeGreaterThan(0);
    for (const r of shown.effective_policy!.rules) expect(r.source).toMatch(/^policies\/default\.yaml:\d+$/);
  });
});
