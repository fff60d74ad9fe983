/** What a value without a name (not a stored secret) becomes. */
export const UNNAMED = "[redacted]";

/** A text to find, and what it becomes: `[secret:NAME]` or `[redacted]`. */
export interface Needle {
  text: string;
  label: string;
}

interface Hit {
  start: number;
  end: number;
  label: string;
}

/**
 * Up to this many needles, each is looked for on its own (the engine's
 * indexOf is fastest then); past it, one automaton (Aho-Corasick) finds
 * them all in a single pass. Every org's secrets are needles, and one org may
 * store many: the cost of a scan must not grow with them.
 */
const FEW = 16;

/**
 * The needles of a redactor, found in text however many there are: every
 * occurrence, where a held-back stream may be cut, whether text may grow into
 * one.
 */
export class NeedleSet {
  /** Longest first, so a value that contains another is blanked whole. */
  readonly list: readonly Needle[];
  private readonly longest: number;
  private readonly automaton: Automaton | undefined;

  constructor(needles: Needle[]) {
    this.list = [...needles].sort((a, b) => b.text.length - a.text.length);
    this.longest = this.list[0]?.text.length ?? 0;
    this.automaton = this.list.length > FEW ? new Automaton(this.list) : undefined;
  }

  get size(): number {
    return this.list.length;
  }

  /** `text` with every occurrence of every needle replaced by its label; overlapping ones are merged. */
  redact(text: string): string {
    // Every occurrence, then overlapping ones merged: blanking one value must not leave the
    // rest of another that overlaps it (".._FIRST_VALUE_SECOND_VALUE.." with a shared middle).
    const hits = this.occurrences(text, 0, text.length);
    if (hits.length === 0) return text;
    hits.sort((a, b) => a.start - b.start || b.end - a.end);
    let out = "";
    let at = 0;
    for (let h = 0; h < hits.length;) {
      const { start, label } = hits[h]!;
      let end = hits[h]!.end;
      for (h++; h < hits.length && hits[h]!.start < end; h++) end = Math.max(end, hits[h]!.end);
      out += text.slice(at, start) + label;
      at = end;
    }
    return out + text.slice(at);
  }

  /**
   * Where a stream may cut `text`: everything before the cut can be let out,
   * everything after is held until more text comes. The held part starts
   * where a needle could be starting (a suffix that is the beginning of one),
   * or earlier where a whole needle runs into it: two needles can overlap.
   */
  safeCut(text: string): number {
    let cut = this.prefixStart(text);
    for (let moved = true; moved && cut > 0;) {
      moved = false;
      for (const h of this.occurrences(text, Math.max(0, cut - this.longest + 1), cut)) {
        if (h.end > cut) {
          cut = h.start;
          moved = true;
        }
      }
    }
    return cut;
  }

  /** Whether a needle starts at the beginning of `text`, or `text` may still grow into one. */
  startsValue(text: string): boolean {
    if (this.automaton) return this.automaton.startsValue(text);
    return this.list.some((n) => text.startsWith(n.text) || n.text.startsWith(text));
  }

  /** Occurrences of needles that start at a position in [from, to). */
  private occurrences(text: string, from: number, to: number): Hit[] {
    if (this.automaton) return this.automaton.occurrences(text, from, to, this.longest);
    const hits: Hit[] = [];
    for (const n of this.list) {
      for (let i = text.indexOf(n.text, from); i >= 0 && i < to; i = text.indexOf(n.text, i + 1)) {
        hits.push({ start: i, end: i + n.text.length, label: n.label });
      }
    }
    return hits;
  }

  /** The earliest position from which the rest of `text` is a proper prefix of a needle; text.length when none. */
  private prefixStart(text: string): number {
    const from = Math.max(0, text.length - this.longest + 1);
    if (this.automaton) return this.automaton.prefixStart(text, from);
    let cut = text.length;
    for (const n of this.list) {
      const first = n.text[0]!;
      for (
        let i = text.indexOf(first, Math.max(from, text.length - n.text.length + 1));
        i >= 0 && i < cut;
        i = text.indexOf(first, i + 1)
      ) {
        if (n.text.startsWith(text.slice(i))) {
          cut = i;
          break;
        }
      }
    }
    return cut;
  }
}

/**
 * Aho-Corasick over UTF-16 code units (as indexOf compares): a trie of the
 * needles with failure links, so one pass over a text finds every needle,
 * and the state after a text tells the longest suffix that begins one. Most
 * trie nodes have one child, kept inline; a map only for the others.
 */
class Automaton {
  private readonly firstCode: number[] = [-1];
  private readonly firstChild: number[] = [0];
  private readonly more: (Map<number, number> | undefined)[] = [undefined];
  private readonly depth: number[] = [0];
  private readonly fail: number[] = [0];
  /** The needle that ends at a node. */
  private readonly ends: (Needle | undefined)[] = [undefined];
  /** The nearest node down the failure links where a needle ends; -1 when none. */
  private readonly nextEnd: number[] = [-1];

  constructor(needles: readonly Needle[]) {
    for (const n of needles) {
      let node = 0;
      for (let i = 0; i < n.text.length; i++) {
        const code = n.text.charCodeAt(i);
        let child = this.child(node, code);
        if (child === undefined) {
          child = this.depth.length;
          this.firstCode.push(-1);
          this.firstChild.push(0);
          this.more.push(undefined);
          this.depth.push(this.depth[node]! + 1);
          this.fail.push(0);
          this.ends.push(undefined);
          this.nextEnd.push(-1);
          if (this.firstCode[node] === -1) {
            this.firstCode[node] = code;
            this.firstChild[node] = child;
          } else {
            (this.more[node] ??= new Map()).set(code, child);
          }
        }
        node = child;
      }
      this.ends[node] ??= n;
    }
    // Breadth first: a node's failure link is set once those of every shallower node are.
    const queue = [0];
    for (let q = 0; q < queue.length; q++) {
      const node = queue[q]!;
      this.eachChild(node, (code, child) => {
        this.fail[child] = node === 0 ? 0 : this.step(this.fail[node]!, code);
        const f = this.fail[child]!;
        this.nextEnd[child] = this.ends[f] ? f : this.nextEnd[f]!;
        queue.push(child);
      });
    }
  }

  occurrences(text: string, from: number, to: number, longest: number): Hit[] {
    const hits: Hit[] = [];
    const stop = Math.min(text.length, to + longest - 1);
    let node = 0;
    for (let i = from; i < stop; i++) {
      node = this.step(node, text.charCodeAt(i));
      for (let e = this.ends[node] ? node : this.nextEnd[node]!; e >= 0; e = this.nextEnd[e]!) {
        const n = this.ends[e]!;
        const start = i - n.text.length + 1;
        if (start < to) hits.push({ start, end: i + 1, label: n.label });
      }
    }
    return hits;
  }

  prefixStart(text: string, from: number): number {
    let node = 0;
    for (let i = from; i < text.length; i++) node = this.step(node, text.charCodeAt(i));
    // The longest suffix that is a trie node; a node with no children is a whole needle, not the start of one.
    while (node !== 0 && this.firstCode[node] === -1) node = this.fail[node]!;
    return node === 0 ? text.length : text.length - this.depth[node]!;
  }

  startsValue(text: string): boolean {
    let node = 0;
    for (let i = 0; i < text.length; i++) {
      if (this.ends[node]) return true;
      const child = this.child(node, text.charCodeAt(i));
      if (child === undefined) return false;
      node = child;
    }
    return true;
  }

  private child(node: number, code: number): number | undefined {
    return this.firstCode[node] === code ? this.firstChild[node] : this.more[node]?.get(code);
  }

  private eachChild(node: number, fn: (code: number, child: number) => void): void {
    if (this.firstCode[node] === -1) return;
    fn(this.firstCode[node]!, this.firstChild[node]!);
    for (const [code, child] of this.more[node] ?? []) fn(code, child);
  }

  private step(node: number, code: number): number {
    for (;;) {
      const child = this.child(node, code);
      if (child !== undefined) return child;
      if (node === 0) return 0;
      node = this.fail[node]!;
    }
  }
}
