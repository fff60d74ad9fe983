import { useEffect, useState } from "preact/hooks";
import { messageOf } from "../client/api";
import { useApi } from "../context";
import { oneLine } from "../format";
import { contentOf, loadHistory } from "../history";

interface Line {
  who: string;
  text: string;
}

/** The last things said in the conversation of a waiting call's turn: what the person approving needs to know. */
export function RecentContext({ agentId, run, count = 4 }: { agentId: string; run: string; count?: number }) {
  const api = useApi();
  const [lines, setLines] = useState<Line[]>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    let live = true;
    (async () => {
      const turn = await api.turn(agentId, run);
      const history = await loadHistory(api, agentId, turn.conversation);
      const said: Line[] = [];
      for (const m of history.messages) {
        const c = contentOf(m);
        if (c.role === "user") said.push({ who: "Message", text: c.text });
        else if (c.role === "assistant" && c.text.trim() !== "") said.push({ who: "Agent", text: c.text });
      }
      if (live) setLines(said.slice(-count));
    })().catch((e: unknown) => live && setError(messageOf(e)));
    return () => {
      live = false;
    };
  }, [agentId, run]);

  if (error) return <p class="muted">Recent context is not available: {error}</p>;
  if (!lines) return <p class="muted">Loading recent context…</p>;
  if (lines.length === 0) return <p class="muted">Nothing was said in this conversation yet.</p>;
  return (
    <ol class="context">
      {lines.map((l, i) => (
        <li key={i}>
          <span class="who">{l.who}</span> {oneLine(l.text, 280)}
        </li>
      ))}
    </ol>
  );
}
