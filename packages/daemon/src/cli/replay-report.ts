import type { ReplayReport, ReplayTurn } from "@wardrik/protocol";

/** Widest a column of the side-by-side view gets; longer text wraps, then is cut. */
const COLUMN = 46;
const MAX_LINES = 4;

type Call = ReplayTurn["replay"]["calls"][number];

/** Where a replayed call's answer came from, as a short tag. */
export function sourceTag(c: Pick<Call, "source" | "status">): string {
  switch (c.source) {
    case "record":
      return "[from the record]";
    case "scripted":
      return "[scripted]";
    case "live":
      return "[LIVE: ran for real]";
    case "missing":
      return "[not in the record: did not run]";
    default:
      return `[${c.status}: reached no tool]`;
  }
}

/** `tool {"arg":1}`: a call on one line. */
export function callLine(c: { tool: string; args: unknown }): string {
  return `${c.tool} ${JSON.stringify(c.args ?? {})}`;
}

export function money(usd: number): string {
  return `$${usd.toFixed(6)}`;
}

/** The whole report as text: a header, then each turn's original and replay side by side. */
export function formatReplay(r: ReplayReport): string {
  const lines: string[] = [];
  const where = r.conversation !== undefined ? `conversation ${r.conversation}` : "a new message";
  lines.push(
    `Replay of ${r.agent}, ${where}: model ${r.model}, policy ${r.policy ?? "(built-in defaults)"}, live: ${r.live.join(", ") || "none"}.`,
  );
  const ranLive = r.turns.some((t) => t.replay.calls.some((c) => c.source === "live"));
  lines.push(
    `Nothing was written to the agent's record. ${ranLive ? "Only the tools named live ran for real." : "No tool ran: every result came from the record."}`,
  );
  for (const t of r.turns) lines.push("", ...formatTurn(t));
  lines.push("", `Replay cost: ${money(r.cost_usd)} (not added to the agent's spend).`);
  for (const j of r.judged ?? []) lines.push(`Judge (${j.model}): ${j.pass ? "pass" : "FAIL"}: ${j.criterion} — ${j.reason}`);
  return lines.join("\n");
}

function formatTurn(t: ReplayTurn): string[] {
  const head = `Turn ${t.turn}${t.run ? ` (${t.run})` : ""}: ${t.diverged ? "DIVERGED" : "same calls as the original"}`;
  const o = t.original;
  const rows: [string, string[], string[]][] = [
    ["status", [o?.status ?? "-"], [t.replay.status]],
    ["reply", wrap(o?.reply ?? o?.reason ?? "-"), wrap(t.replay.reply ?? t.replay.reason ?? "-")],
    [
      "calls",
      o ? (o.calls.length > 0 ? o.calls.flatMap((c) => [...wrap(callLine(c)), `  -> ${c.status}`]) : ["(none)"]) : ["-"],
      t.replay.calls.length > 0 ? t.replay.calls.flatMap((c) => [...wrap(callLine(c)), `  ${sourceTag(c)}`]) : ["(none)"],
    ],
    ["cost", [o ? money(o.cost_usd) : "-"], [money(t.replay.cost_usd)]],
    ["model calls", [o ? String(o.iterations) : "-"], [String(t.replay.iterations)]],
  ];
  if (t.replay.status === "would_ask" && t.replay.reason) rows.push(["stopped", ["-"], wrap(t.replay.reason)]);
  const out = [
    head,
    ...t.messages.map((m) => `  message      ${clip(m, COLUMN * 2)}`),
    `  ${"".padEnd(11)}  ${"original".padEnd(COLUMN)}  replay`,
  ];
  for (const [label, left, right] of rows) {
    const n = Math.max(left.length, right.length);
    for (let i = 0; i < n; i++) {
      out.push(`  ${(i === 0 ? label : "").padEnd(11)}  ${(left[i] ?? "").padEnd(COLUMN)}  ${right[i] ?? ""}`.trimEnd());
    }
  }
  return out;
}

/** Text in lines of at most COLUMN characters, broken between words (a longer word is cut), MAX_LINES of them, the last cut with … when more is left. */
function wrap(text: string): string[] {
  const lines: string[] = [];
  let line = "";
  for (let word of text.replace(/\s+/g, " ").trim().split(" ")) {
    while (word.length > 0) {
      const room = line === "" ? COLUMN : COLUMN - line.length - 1;
      if (word.length <= room) {
        line = line === "" ? word : `${line} ${word}`;
        word = "";
      } else if (line !== "") {
        lines.push(line);
        line = "";
      } else {
        lines.push(word.slice(0, COLUMN));
        word = word.slice(COLUMN);
      }
    }
  }
  if (line !== "") lines.push(line);
  if (lines.length > MAX_LINES) lines.splice(MAX_LINES - 1, Infinity, clip(lines[MAX_LINES - 1]! + " …", COLUMN));
  return lines.length > 0 ? lines : [""];
}

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ");
  return flat.length > max ? flat.slice(0, max - 1) + "…" : flat;
}
