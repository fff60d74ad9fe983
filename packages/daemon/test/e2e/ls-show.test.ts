/**
 * `wardrik ls`, `ls attention`, `agent show` (text and --json), and unreadable
 * agent files: the reason names the file and the line, and the others still load and answer.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { AGENT_ID, agentFile, createProject, type TestProject } from "../helpers/spawn-daemon.js";

let p: TestProject;

const BAD = `---
description: Has a typo in its frontmatter, and a wrong value
colour: blue
timeout: soon
---
Never loads.
`;
const WRONG_TYPE = `---
description: Wrong type
max_iterations: ten
---
Never loads.
`;
const BAD_YAML = `---
description: [unclosed
---
Never loads.
`;
const NO_POLICY = `---
description: Names a policy that does not exist
tools: [files]
policy: nosuch
---
Never loads.
`;
const NO_MODEL = `---
description: Names a model that does not exist
model: imaginary
---
Never loads.
`;

beforeAll(async () => {
  p = await createProject({
    files: {
      "agents/bad.md": BAD,
      "agents/wrongtype.md": WRONG_TYPE,
      "agents/badyaml.md": BAD_YAML,
      "agents/nopolicy.md": NO_POLICY,
      "agents/nomodel.md": NO_MODEL,
      "agents/echoer.md": agentFile({ description: "Echoes", title: "The Echoer", model: "script/echo", max_iterations: 4, timeout: 30 }),
    },
  });
});

interface Summary {
  id: string;
  org: string;
  name: string;
  title: string;
  description: string;
  status: string;
  source: string;
  reason?: string;
}

const UNREADABLE = ["bad", "badyaml", "nomodel", "nopolicy", "wrongtype"];

// Nothing here changes what another test reads, so the tests run at once.
describe.concurrent("wardrik ls", () => {
  it("lists every agent with its status; unreadable ones with a reason naming file and line", async () => {
    const r = await p.cli(["ls"]);
    expect(r.code, r.stderr).toBe(0);
    const rows = r.stdout.trim().split("\n");
    expect(rows[0]).toMatch(/^NAME\s+STATUS\s+DESCRIPTION$/);
    const byName = new Map(rows.slice(1).map((l) => [l.split(/\s+/)[0]!, l]));
    expect([...byName.keys()].sort()).toEqual(["bad", "badyaml", "echoer", "helper", "nomodel", "nopolicy", "wrongtype"]);
    expect(byName.get("helper")).toMatch(/^helper\s+idle\s+A small helper/);
    expect(byName.get("echoer")).toMatch(/^echoer\s+idle\s+Echoes$/);
    // One line per agent: the first problem, and how many more agent show lists.
    expect(byName.get("bad")).toMatch(/^bad\s+unreadable\s+agents\/bad\.md:3: .*colour.* \(and 1 more: wardrik agent show\)$/);
    expect(byName.get("wrongtype")).toMatch(/^wrongtype\s+unreadable\s+agents\/wrongtype\.md:3: .*max_iterations/);
    expect(byName.get("badyaml")).toMatch(/^badyaml\s+unreadable\s+agents\/badyaml\.md:\d+: .*YAML/);
  });

  it("an unknown policy or model makes the agent unreadable with a reason that names it, the file and the line", async () => {
    const agents = (await p.apiOk<{ agents: Summary[] }>("GET", "/v1/agents")).agents;
    const nopolicy = agents.find((a) => a.name === "nopolicy")!;
    const nomodel = agents.find((a) => a.name === "nomodel")!;
    expect(nopolicy.status).toBe("unreadable");
    expect(nopolicy.reason).toContain("nosuch");
    expect(nomodel.status).toBe("unreadable");
    expect(nomodel.reason).toContain("imaginary");
    // Issue 2, acceptance 4: "an unusable file makes that agent unreadable with a reason that names file and line".
    expect(nopolicy.reason).toMatch(/^agents\/nopolicy\.md:4\b/);
    expect(nomodel.reason).toMatch(/^agents\/nomodel\.md:3\b/);
  });

  it("--json prints the agents with IDs, statuses and reasons", async () => {
    const r = await p.cli(["ls", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const agents = JSON.parse(r.stdout) as Summary[];
    expect(agents).toHaveLength(7);
    for (const a of agents) {
      expect(a.id).toMatch(AGENT_ID);
      expect(a.org).toBe("default");
      expect(a.source).toBe("file");
      expect(a.status).toBe(UNREADABLE.includes(a.name) ? "unreadable" : "idle");
      if (a.status === "unreadable") expect(a.reason).toContain(`agents/${a.name}.md`);
      else expect(a.reason).toBeUndefined();
    }
    expect(new Set(agents.map((a) => a.id)).size).toBe(7);
    expect(agents.find((a) => a.name === "echoer")!.title).toBe("The Echoer");
  });

  it("ls attention lists only the agents that need a person: here the unreadable ones", async () => {
    const r = await p.cli(["ls", "attention", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const agents = JSON.parse(r.stdout) as Summary[];
    expect(agents.map((a) => a.name).sort()).toEqual(UNREADABLE);
  });
});

describe.concurrent("wardrik agent show", () => {
  it("lists every problem of an unreadable agent's file, one a line", async () => {
    const r = await p.cli(["agent", "show", "bad"]);
    expect(r.stdout).toMatch(/^ {2}unreadable: agents\/bad\.md:3: key "colour" is not allowed/m);
    expect(r.stdout).toMatch(/^ {14}agents\/bad\.md:4: timeout must be a number$/m);
  });

  it("shows an agent's details in text", async () => {
    const r = await p.cli(["agent", "show", "echoer"]);
    expect(r.code, r.stderr).toBe(0);
    const id = await p.agentId("echoer");
    expect(r.stdout).toContain(`echoer (${id})  idle`);
    expect(r.stdout).toContain("Echoes");
    expect(r.stdout).toContain("file: agents/echoer.md");
    expect(r.stdout).toContain("model: script/echo");
    expect(r.stdout).toMatch(/max_iterations 4, timeout 30 s/);
  });

  it("--json prints the definition, limits, conversations and spend", async () => {
    const r = await p.cli(["agent", "show", "helper", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const d = JSON.parse(r.stdout) as Summary & {
      tools: string[];
      max_iterations: number;
      timeout: number;
      retries: number;
      idle_timeout: number | string;
      instructions: string;
      file: string;
      conversations: unknown[];
      waiting_calls: unknown[];
      spend: { today_usd: number };
    };
    expect(d.id).toBe(await p.agentId("helper"));
    expect(d.name).toBe("helper");
    expect(d.title).toBe("Helper");
    expect(d.status).toBe("idle");
    expect(d.tools).toEqual(["files", "workers/*"]);
    expect(d.max_iterations).toBe(10);
    expect(d.timeout).toBe(600);
    expect(d.retries).toBe(2);
    expect(d.idle_timeout).toBe(900);
    expect(d.file).toBe("agents/helper.md");
    expect(d.instructions).toMatch(/helpful assistant/);
    expect(d.waiting_calls).toEqual([]);
    expect(d.spend.today_usd).toBe(0);
  });

  it("shows why an agent is unreadable", async () => {
    const r = await p.cli(["agent", "show", "wrongtype"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/wrongtype \(agt_[0-9A-Z]{26}\)\s+unreadable/);
    expect(r.stdout).toMatch(/unreadable: agents\/wrongtype\.md:3: .*max_iterations/);
  });
});

// Runs after the listings above, which expect every readable agent idle.
describe("unreadable agents do not stop the others", () => {
  it("the readable agents still answer while others are unreadable; an unreadable one refuses with its reason", async () => {
    const { end } = await p.send("echoer", "still here");
    expect(end.data.reply).toBe("You said: still here");

    const no = await p.cli(["ask", "bad", "hello?"]);
    expect(no.code).toBe(1);
    expect(no.stderr).toMatch(/bad is unreadable: agents\/bad\.md:3/);
  });
});
