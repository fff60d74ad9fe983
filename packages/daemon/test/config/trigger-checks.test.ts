/**
 * What an agent file's triggers must get right beyond their shape: no event
 * trigger on the agent's own events, one name per webhook, a webhook secret
 * that refers to something set, a cron that croner can run. Each makes the
 * file unreadable with its file, line and key, like any other key.
 */
import { describe, expect, it } from "vitest";
import { ConfigError, parseAgentFile } from "../../src/config/index.js";

const secrets: Record<string, string> = { DEPLOY_HOOK: "whsec_c2VjcmV0" };
const references = { env: {}, secret: (name: string) => secrets[name] };
const agent = (frontmatter: string) =>
  parseAgentFile(`---\ndescription: d\n${frontmatter}---\nbody\n`, "agents/watcher.md", { references });

function message(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (ConfigError.isInstance(error)) return error.message;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("trigger checks", () => {
  it("accepts triggers whose webhook secrets are set", () => {
    const def = agent("triggers:\n  - webhook: deploy\n    secret: ${secret:DEPLOY_HOOK}\n    message: go\n");
    // The file keeps the reference: the value is read when a request comes in.
    expect(def.triggers).toEqual([{ webhook: "deploy", secret: "${secret:DEPLOY_HOOK}", message: "go" }]);
  });

  it.each([
    [
      "triggers:\n  - schedule: '0 9 * * *'\n    message: a\n  - event: { agent: watcher }\n    message: b\n",
      "agents/watcher.md:6: triggers[1].event.agent names this agent: an event trigger cannot watch the agent's own events",
    ],
    [
      "triggers:\n  - webhook: deploy\n    secret: ${secret:DEPLOY_HOOK}\n    message: a\n  - webhook: deploy\n    secret: x\n    message: b\n",
      "agents/watcher.md:7: triggers[1].webhook: webhook deploy is already triggers[0]",
    ],
    ["triggers:\n  - webhook: deploy\n    secret: ${secret:NOPE}\n    message: a\n", "agents/watcher.md:5: triggers[0].secret"],
    ["triggers:\n  - schedule: '61 * * * *'\n    message: a\n", "agents/watcher.md:4: triggers[0].schedule is not a valid cron expression"],
  ])("refuses %j with file and line", (text, start) => {
    expect(message(() => agent(text))).toContain(start);
  });
});
