/**
 * The progress renderer of `wardrik ask`, given a stand-in for stderr: a
 * terminal gets one status line rewritten in place, anything else one line
 * per change of state.
 */
import { describe, expect, it } from "vitest";
import { AskProgress, formatDuration, summaryLine } from "../../src/cli/ask-progress.js";

function stream(isTTY: boolean) {
  const chunks: string[] = [];
  return { isTTY, columns: 60, chunks, write: (s: string) => chunks.push(s), text: () => chunks.join("") };
}

/** What a terminal would show: `\r` returns to the line start, ESC[K clears the rest of it. */
function screen(raw: string): string[] {
  const lines: string[] = [""];
  for (const part of raw.split(/(\r\x1b\[K|\n)/)) {
    if (part === "\r\x1b[K") lines[lines.length - 1] = "";
    else if (part === "\n") lines.push("");
    else lines[lines.length - 1] += part;
  }
  return lines;
}

describe("AskProgress on a terminal", () => {
  it("rewrites one status line with the time spent in the state, and clears it at the end", async () => {
    let now = 0;
    const s = stream(true);
    const p = new AskProgress(s, () => now, 5);
    p.waiting("waiting for the model (demo)");
    expect(screen(s.text())).toEqual(["waiting for the model (demo) · 0 s"]);
    now = 12_400;
    await new Promise((r) => setTimeout(r, 30));
    expect(screen(s.text())).toEqual(["waiting for the model (demo) · 12 s"]);
    p.line("→ files/write (call_1)");
    expect(screen(s.text())).toEqual(["→ files/write (call_1)", "waiting for the model (demo) · 12 s"]);
    p.waiting("running files/write", { quiet: true });
    expect(screen(s.text())).toEqual(["→ files/write (call_1)", "running files/write · 0 s"]);
    p.stop();
    expect(screen(s.text())).toEqual(["→ files/write (call_1)", ""]);
    const before = s.chunks.length;
    await new Promise((r) => setTimeout(r, 30));
    expect(s.chunks.length, "no redraw after stop").toBe(before);
  });

  it("steps aside while reply text streams and comes back with the next state", () => {
    const s = stream(true);
    const p = new AskProgress(s, () => 0, 1000);
    p.waiting("waiting for the model (demo)");
    p.streaming();
    expect(screen(s.text())).toEqual([""]);
    p.waiting("waiting for the model (demo)");
    expect(screen(s.text())).toEqual(["waiting for the model (demo) · 0 s"]);
    p.stop();
  });

  it("cuts a status line to the terminal's width", () => {
    const s = stream(true);
    const p = new AskProgress(s, () => 0, 1000);
    p.waiting("x".repeat(200));
    expect(screen(s.text())[0]!.length).toBeLessThan(60);
    p.stop();
  });
});

describe("AskProgress elsewhere", () => {
  it("prints one line per change of state, no control characters, nothing for quiet states", () => {
    const s = stream(false);
    const p = new AskProgress(s, () => 0, 5);
    p.waiting("waiting for the model (demo)");
    p.waiting("waiting for the model (demo)");
    p.line("→ files/write (call_1)");
    p.waiting("running files/write", { quiet: true });
    p.waiting("waiting for the model (demo)");
    p.stop();
    expect(s.text()).toBe("… waiting for the model (demo)\n→ files/write (call_1)\n… waiting for the model (demo)\n");
  });
});

describe("durations and the summary line", () => {
  it("formats durations", () => {
    expect(formatDuration(850)).toBe("850 ms");
    expect(formatDuration(12_340)).toBe("12.3 s");
    expect(formatDuration(12_340, false)).toBe("12 s");
    expect(formatDuration(125_000)).toBe("2 min 05 s");
  });

  it("sums up the turn", () => {
    expect(summaryLine("✓ completed", 2100, { modelCalls: 3, inputTokens: 12_345, outputTokens: 67, costUsd: 0.00123 })).toBe(
      "✓ completed in 2.1 s · 3 model calls · 12,345 tokens in, 67 out · $0.0012",
    );
  });
});
