/**
 * Sub-agents: `agents: [NAME]` offers agents/NAME; a call runs a turn of that
 * agent (its child turn), linked on both records, governed by the parent's
 * policy and budget, refused for cycles and past max_depth, cancelled with
 * the parent, and carried across a kill -9 of the daemon. One daemon for the
 * file; each test uses agents of its own.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { agentFile, createProject, short, type TestProject, type WireEvent } from "../helpers/spawn-daemon.js";
import { cappedPolicy } from "../helpers/capped-policy.js";

let p: TestProject;

/** A parent that sends its message on to `child` and replies with what it got. */
const delegating = (child: string) => `steps:
  - tool_calls:
      - tool: agents/${child}
        args: { message: "look into {{message}}" }
  - text: "parent got: {{result}}"
`;
/** Two calls of the same child in one round, in the same child conversation. */
const TWICE = `steps:
  - tool_calls:
      - tool: agents/researcher
        args: { message: "first" }
      - tool: agents/researcher
        args: { message: "second" }
  - text: "both done"
`;
const RESEARCH = `steps:
  - text: "facts on {{message}}"
`;
const ASKING = `steps:
  - tool_calls:
      - tool: person/ask
        args: { question: "Which {{message}}?" }
  - text: "child heard {{result}}"
`;
const HANGING = `steps:
  - hang: true
`;
const SPENDING = `steps:
  - text: "costly facts"
    usage: { input: 1000000, output: 0 }
`;
const SPENDING_SLOWLY = `steps:
  - tool_calls:
      - tool: files/write
        args: { path: a.md, content: a }
    usage: { input: 300000, output: 0 }
  - tool_calls:
      - tool: files/write
        args: { path: b.md, content: b }
    usage: { input: 300000, output: 0 }
  - text: "never said"
`;
const OPEN = `description: Lets everything through.
rules:
  - tool: "*"
    decision: allow
`;
const CAPPED = cappedPolicy(0.5);
const NO_HELP = `description: No calls to other agents.
rules:
  - tool: agents/*
    decision: deny
    reason: Work alone.
`;
const ASK_FIRST = `description: Calls to other agents need a person.
rules:
  - tool: agents/*
    decision: ask
    reason: Check before delegating.
`;
/** A judge model decides calls to other agents: research on reefs, yes; anything else, no. */
const JUDGED = `description: A judge decides calls to other agents.
rules:
  - tool: agents/*
    decision: judge
    judge:
      model: gatekeeper
      prompt: Allow research on reefs only.
`;
// The judge reads the call as JSON in its user message; each ask below has its own conversation.
const GATEKEEPER = `scenarios:
  - match: 'look into reefs'
    steps: [{ text: '{"decision": "allow", "reason": "Reef research is wanted."}' }]
steps:
  - text: '{"decision": "deny", "reason": "Only reefs are researched."}'
`;

const agent = (model: string, fields: Record<string, unknown> = {}) =>
  agentFile({ description: `Plays ${model}`, model, policy: "open", ...fields });

beforeAll(async () => {
  p = await createProject({
    // Fewer places than the e-chain has turns: a child that took a place of its own would wait for one forever.
    config: (text) => `${text}limits:\n  org_running_turns: 3\n`,
    scripts: {
      to_researcher: delegating("researcher"),
      to_self: delegating("selfish"),
      to_d2: delegating("d2"),
      to_d3: delegating("d3"),
      to_e2: delegating("e2"),
      to_e3: delegating("e3"),
      to_e4: delegating("e4"),
      to_e5: delegating("e5"),
      to_asker: delegating("child_asker"),
      to_hanger: delegating("hanger"),
      to_spender: delegating("spender"),
      to_slow_spender: delegating("slow_spender"),
      twice: TWICE,
      research: RESEARCH,
      asking: ASKING,
      hanging: HANGING,
      gatekeeper: GATEKEEPER,
    },
    models: {
      spending_priced: { provider: "script", model: "spending", price: { input: 1, output: 1 } },
      slowly_priced: { provider: "script", model: "spending_slowly", price: { input: 1, output: 1 } },
    },
    files: {
      "scripts/spending.yaml": SPENDING,
      "scripts/spending_slowly.yaml": SPENDING_SLOWLY,
      "agents/slow_spender.md": agent("slowly_priced", { tools: ["files"] }),
      "agents/frugal.md": agent("to_slow_spender", { agents: ["slow_spender"], policy: "capped" }),
      "policies/open.yaml": OPEN,
      "policies/capped.yaml": CAPPED,
      "policies/no_help.yaml": NO_HELP,
      "policies/ask_first.yaml": ASK_FIRST,
      "policies/judged.yaml": JUDGED,
      "agents/judged_lead.md": agent("to_researcher", { agents: ["researcher"], policy: "judged" }),
      "agents/researcher.md": agent("research"),
      "agents/lead.md": agent("to_researcher", { agents: ["researcher"] }),
      "agents/twice.md": agent("twice", { agents: ["researcher"] }),
      "agents/loner.md": agent("to_researcher", { agents: ["researcher"], policy: "no_help" }),
      "agents/careful.md": agent("to_researcher", { agents: ["researcher"], policy: "ask_first" }),
      "agents/selfish.md": agent("to_self", { agents: ["selfish"] }),
      "agents/d1.md": agent("to_d2", { agents: ["d2"], max_depth: 1 }),
      "agents/d2.md": agent("to_d3", { agents: ["d3"] }),
      "agents/d3.md": agent("research"),
      ...Object.fromEntries([1, 2, 3, 4].map((i) => [`agents/e${i}.md`, agent(`to_e${i + 1}`, { agents: [`e${i + 1}`] })])),
      "agents/e5.md": agent("research"),
      "agents/child_asker.md": agent("asking", { tools: ["person"] }),
      "agents/crash_parent.md": agent("to_asker", { agents: ["child_asker"] }),
      "agents/hanger.md": agent("hanging"),
      "agents/cancel_parent.md": agent("to_hanger", { agents: ["hanger"] }),
      "agents/kill_parent.md": agent("to_hanger", { agents: ["hanger"] }),
      "agents/spender.md": agent("spending_priced"),
      "agents/thrifty.md": agent("to_spender", { agents: ["spender"], policy: "capped" }),
    },
  });
});

const ofType = (events: WireEvent[], type: string) => events.filter((e) => short(e.type) === type);

/** The parent's agents/NAME call once its child turn has started: the call, the parent's turn and the child turn. */
async function childStarted(parent: string): Promise<{ call: string; run: string; child: string }> {
  const started = await p.waitForEvent(parent, (e) => short(e.type) === "call.started" && e.data.child !== undefined);
  const child = started.data.child as { agent: string; run: string };
  await p.waitForEvent(child.agent, (e) => short(e.type) === "turn.started" && e.run === child.run);
  return { call: String(started.data.call), run: String(started.run), child: child.run };
}

describe.concurrent("sub-agents (agents/NAME)", () => {
  it("a parent calls its child and uses the reply; both records link to each other", async () => {
    const { run, end } = await p.send("lead", "tides");
    expect(short(end.type)).toBe("turn.completed");
    expect(end.data.reply).toBe('parent got: {"reply":"facts on look into tides"}');
    const lead = await p.events("lead");
    // The parent's call.started names the child turn (written before the child turn starts); the child names the call back.
    const started = ofType(lead, "call.started").find((e) => e.run === run)!;
    const child = started.data.child as { agent: string; run: string };
    expect(child.agent).toBe("researcher");
    const research = await p.events("researcher");
    const childStarted = ofType(research, "turn.started").find((e) => e.run === child.run)!;
    expect(childStarted.data.parent).toEqual({ agent: await p.agentId("lead"), run, call: started.data.call });
    expect(childStarted.data.conversation).toBe("lead/main");
    expect(ofType(research, "turn.completed").filter((e) => e.run === child.run)).toHaveLength(1);
    const show = await p.cli(["agent", "show", "lead"]);
    expect(show.stdout).toContain("agents: researcher (as agents/NAME; max_depth 3)");
    expect((await p.cli(["tools", "lead"])).stdout).toContain("agents/researcher");
    const shown = await p.cli(["events", "lead"]);
    expect(shown.stdout).toContain(`agents/researcher attempt 1 runs as ${child.run} of researcher`);
  });

  it("two calls of one child in a round, in one conversation, each run their own child turn: the one their call.started named", async () => {
    const { run, end } = await p.send("twice", "x");
    expect(short(end.type)).toBe("turn.completed");
    const events = await p.events("twice");
    const started = ofType(events, "call.started").filter((e) => e.run === run);
    expect(started).toHaveLength(2);
    const research = await p.events("researcher");
    const replies = new Map<string, unknown>();
    for (const s of started) {
      const child = (s.data.child as { run: string }).run;
      const turn = ofType(research, "turn.started").filter((e) => e.run === child);
      expect(turn).toHaveLength(1);
      expect((turn[0]!.data.parent as { call: string }).call).toBe(s.data.call);
      const completed = ofType(events, "call.completed").find((e) => e.data.call === s.data.call)!;
      replies.set(child, completed.data.output);
      expect(ofType(research, "turn.completed").find((e) => e.run === child)?.data.reply).toBe(
        (completed.data.output as { reply: string }).reply,
      );
    }
    expect([...replies.values()].map((o) => (o as { reply: string }).reply).sort()).toEqual(["facts on first", "facts on second"]);
  });

  it("an agent that would reach itself is refused, saying so, and no child turn starts", async () => {
    const { end } = await p.send("selfish", "x");
    expect(short(end.type)).toBe("turn.completed");
    expect(end.data.reply).toContain("Refused: selfish is already in the chain of calls that led here (selfish → selfish)");
    expect(ofType(await p.events("selfish"), "turn.started")).toHaveLength(1);
  });

  it("a call deeper than max_depth is refused with the chain; the levels above get the refusal as an answer", async () => {
    const { end } = await p.send("d1", "deep");
    expect(short(end.type)).toBe("turn.completed");
    expect(end.data.reply).toContain("Refused: calling d3 would nest agents 2 deep (d1 → d2 → d3); max_depth is 1.");
    expect(ofType(await p.events("d3"), "turn.started")).toHaveLength(0);
  });

  it("by default agents nest 3 deep below the first: the fourth level's call is refused; the chain's turns run in the first's org place", async () => {
    const { end } = await p.send("e1", "deep");
    expect(short(end.type)).toBe("turn.completed");
    expect(end.data.reply).toContain("Refused: calling e5 would nest agents 4 deep (e1 → e2 → e3 → e4 → e5); max_depth is 3.");
    expect(ofType(await p.events("e4"), "turn.completed")).toHaveLength(1);
    expect(ofType(await p.events("e5"), "turn.started")).toHaveLength(0);
  });

  it("the parent's policy decides the call: deny sends nothing; ask waits for a person, then the child runs", async () => {
    const denied = await p.send("loner", "x");
    expect(denied.end.data.reply).toContain("Work alone.");
    const careful = await p.agentId("careful");
    await p.apiOk("POST", `/v1/agents/${careful}/messages`, { text: "reefs" });
    const asked = await p.waitForEvent(careful, (e) => short(e.type) === "approval.requested");
    expect(asked.data).toMatchObject({ tool: "agents/researcher", reason: "Check before delegating." });
    expect((await p.cli(["approve", "careful", String(asked.data.call)])).code).toBe(0);
    const end = await p.waitForTurnEnd(careful, String(asked.run));
    expect(end.data.reply).toBe('parent got: {"reply":"facts on look into reefs"}');
    // The denied call sent no message: the only turns of researcher here are the approved one's and other tests'.
    const fromLoner = ofType(await p.events("researcher"), "turn.started").filter((e) => String(e.data.conversation).startsWith("loner/"));
    expect(fromLoner).toHaveLength(0);
  });

  it("the parent's policy may leave the call to a judge: allowed, the child runs; denied, no child turn starts and the parent hears why", async () => {
    const allowed = await p.send("judged_lead", "reefs", "reefs");
    expect(allowed.end.data.reply).toBe('parent got: {"reply":"facts on look into reefs"}');
    const denied = await p.send("judged_lead", "rumours", "rumours");
    expect(denied.end.data.reply).toContain("Only reefs are researched.");
    const verdicts = ofType(await p.events("judged_lead"), "call.judged").map((e) => [e.data.tool, e.data.verdict, e.data.reason]);
    expect(verdicts).toEqual([
      ["agents/researcher", "allow", "Reef research is wanted."],
      ["agents/researcher", "deny", "Only reefs are researched."],
    ]);
    // Only the allowed call reached the child.
    const children = ofType(await p.events("researcher"), "turn.started").filter((e) =>
      String(e.data.conversation).startsWith("judged_lead/"),
    );
    expect(children).toHaveLength(1);
  });

  it("the child's spend counts against the parent's budget: its cost is the call's, and the parent's turn stops at its cap", async () => {
    const { end } = await p.send("thrifty", "x");
    const thrifty = await p.events("thrifty");
    const completed = ofType(thrifty, "call.completed").find((e) => e.data.tool === "agents/spender")!;
    expect(completed.data.cost_usd).toBeCloseTo(1, 6);
    expect(short(end.type)).toBe("turn.failed");
    expect(end.data.code).toBe("budget");
    expect(ofType(thrifty, "budget.exceeded")).toHaveLength(1);
  });

  it("a child turn stops once it would pass its caller's budget, before the caller is told its cost", async () => {
    const { end } = await p.send("frugal", "x");
    expect(short(end.type)).toBe("turn.failed");
    const child = await p.events("slow_spender");
    const failed = ofType(child, "turn.failed")[0]!;
    expect(failed.data.code).toBe("budget");
    expect(failed.data.reason).toContain("The calling agent frugal's turn budget of $0.5 would be passed");
    // Two model calls ($0.30 each) ran; the third would have passed the caller's cap.
    expect(ofType(child, "model.replied")).toHaveLength(2);
    const call = ofType(await p.events("frugal"), "call.failed").find((e) => e.data.tool === "agents/slow_spender")!;
    expect(call.data.error).toContain("slow_spender's turn failed: The calling agent frugal's turn budget");
  });

  it("cancelling the parent's turn cancels the child turn", async () => {
    const parent = await p.agentId("cancel_parent");
    await p.apiOk("POST", `/v1/agents/${parent}/messages`, { text: "x" });
    const delegated = await childStarted(parent);
    expect((await p.cli(["agent", "cancel", "cancel_parent"])).code).toBe(0);
    const end = await p.waitForTurnEnd("hanger", delegated.child);
    expect(short(end.type)).toBe("turn.cancelled");
  });

  it("killing the parent's call cancels the child turn, and the parent goes on with the call stopped", async () => {
    const parent = await p.agentId("kill_parent");
    await p.apiOk("POST", `/v1/agents/${parent}/messages`, { text: "x" });
    const delegated = await childStarted(parent);
    expect((await p.cli(["agent", "kill", "kill_parent", delegated.call])).code).toBe(0);
    const child = await p.waitForTurnEnd("hanger", delegated.child);
    expect(short(child.type)).toBe("turn.cancelled");
    expect(child.data.reason).toBe(`The call ${delegated.call} that ran this turn for its caller was stopped.`);
    const end = await p.waitForTurnEnd(parent, delegated.run);
    expect(short(end.type)).toBe("turn.completed");
    expect(end.data.reply).toContain("parent got: A person stopped this call");
  });
});

describe("wardrik schema agent", () => {
  it("describes agents and max_depth", async () => {
    const r = await p.cli(["schema", "agent"]);
    expect(r.code, r.stderr).toBe(0);
    const schema = JSON.parse(r.stdout) as { properties: Record<string, { description?: string }> };
    expect(schema.properties.agents?.description).toMatch(/offered as the tool agents\/NAME/);
    expect(schema.properties.max_depth?.description).toMatch(/default 3/);
  });
});

describe("sub-agents across a crash", () => {
  it("kill -9 during the child turn: after the restart the child goes on and its answer reaches the parent once", async () => {
    const parent = await p.agentId("crash_parent");
    await p.apiOk("POST", `/v1/agents/${parent}/messages`, { text: "port" });
    const asked = await p.waitForEvent("child_asker", (e) => short(e.type) === "question.asked");
    await p.waitForEvent("child_asker", (e) => short(e.type) === "turn.parked");
    const delegated = await childStarted(parent);
    await p.kill();
    await p.start();
    expect((await p.cli(["answer", "child_asker", String(asked.data.call), "the north one"])).code).toBe(0);
    const end = await p.waitForTurnEnd(parent, delegated.run);
    expect(short(end.type)).toBe("turn.completed");
    expect(end.data.reply).toBe('parent got: {"reply":"child heard {\\"answer\\":\\"the north one\\"}"}');
    const events = await p.events(parent);
    expect(ofType(events, "call.completed").filter((e) => e.data.call === delegated.call)).toHaveLength(1);
    // Two attempts of the call (before and after the crash) named the same child turn, and only it ran.
    const attempts = ofType(events, "call.started").filter((e) => e.data.call === delegated.call);
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    for (const a of attempts) expect((a.data.child as { run: string }).run).toBe(delegated.child);
    const child = await p.events("child_asker");
    expect(ofType(child, "turn.started")).toHaveLength(1);
    expect(ofType(child, "turn.completed")).toHaveLength(1);
  });
});
