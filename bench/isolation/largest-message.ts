/** The largest message the API accepts (1,000,000 characters, about 1.9 MB of UTF-8), taken by a turn each pass. */
import { count, type HostileTally, type IsolationKind } from "../isolation-kit.js";

const body = JSON.stringify({ text: "ééééééé ".repeat(125_000), conversation: "large" });

export const kind: IsolationKind = {
  name: "largest-message",
  hostile: "POST /v1/agents/{id}/messages with a 1,000,000-character message (1.9 MB), then its turn",
  prepare: (draft) => {
    draft.files["agents/reader.md"] = "---\ndescription: Reads long messages\nmodel: bench\n---\nYou read.\n";
  },
  attack: async (d) => {
    const tally: HostileTally = {};
    const id = await d.agentId("reader");
    const res = await fetch(`${d.url}/v1/agents/${id}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${d.token}`, "content-type": "application/json" },
      body,
    });
    count(tally, `status_${res.status}`);
    if (res.status !== 202) return tally;
    const { message } = (await res.json()) as { message: string };
    count(tally, `turn_${(await d.turnEnd(id, message)).type.split(".").pop()!}`);
    return tally;
  },
};
