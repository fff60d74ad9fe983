/**
 * Secret values blanked out of everything the daemon records or shows.
 *
 * The daemon's redactor holds every known value, each owned by an org or by
 * none: the secrets stored with `wardrik secret set` belong to their org, as
 * do config.yaml's credentials (model API keys, MCP servers' env and
 * headers, Slack and webhook secrets) to config.yaml's org and an MCP login
 * to the org that made it. What one org sees (its events, message rows,
 * turn replies, tool outcomes, live deltas) passes through `forOrg(org)`,
 * which blanks that org's values and those of no org only: another org's
 * value is not recognised there, so an org cannot confirm a guess of another
 * org's secret by seeing it come back as a label. The daemon's own log and
 * traces pass through the whole redactor, which blanks every org's values.
 *
 * A stored secret becomes `[secret:NAME]` (the name is not secret: `wardrik
 * secret ls` shows it); other values become `[redacted]`. Values shorter than
 * MIN_SECRET_LENGTH are ignored: blanking "on" or "main" would mangle every
 * message and hide nothing. A value is also found JSON-escaped and
 * URL-encoded, the forms it takes inside request bodies and URLs.
 */
import { NeedleSet, UNNAMED } from "./needle-set.js";
import { StreamRedactor } from "./stream-redactor.js";

export { StreamRedactor };

export const MIN_SECRET_LENGTH = 6;

/**
 * Whose values a view blanks: every org's (undefined: the whole redactor),
 * one org's and those of no org (a string), or only those of no org (null).
 */
type Scope = string | null | undefined;

export class SecretRedactor {
  /** Values of no org: blanked for every org. value -> label */
  private readonly common = new Map<string, string>();
  /** Values of one org. org -> value -> label */
  private readonly owned = new Map<string, Map<string, string>>();
  private readonly views = new Map<string | null, SecretRedactor>();
  private needles: NeedleSet | undefined;
  /** Bumped on every add; with the parent's, tells when the compiled list is stale. */
  private version = 0;
  private compiledAt = -1;

  /**
   * `parent`: a redactor whose values this one also blanks, including values
   * it learns later; `scope`: which of the parent's values (see Scope).
   */
  constructor(
    private readonly parent?: SecretRedactor,
    private readonly scope?: Scope,
  ) {}

  /**
   * Adds a value to blank; `name` labels a stored secret; `org`: the org it
   * belongs to (blanked in that org's view and the whole redactor), or none
   * (blanked everywhere). Values under MIN_SECRET_LENGTH are ignored.
   */
  add(value: string | undefined, name?: string, org?: string): void {
    if (!value || value.length < MIN_SECRET_LENGTH) return;
    let values = this.common;
    if (org !== undefined) {
      values = this.owned.get(org) ?? new Map<string, string>();
      this.owned.set(org, values);
    }
    const label = name ? `[secret:${name}]` : UNNAMED;
    // A named label wins over an anonymous one for the same value.
    if (values.get(value) === label || (values.has(value) && label === UNNAMED)) return;
    values.set(value, label);
    this.version++;
  }

  /** A redactor that blanks this one's values (live) plus its own. */
  extend(): SecretRedactor {
    return new SecretRedactor(this);
  }

  /** What `org` may see redacted: its own values and those of no org, never another org's (live). */
  forOrg(org: string): SecretRedactor {
    return this.view(org);
  }

  /** Only the values of no org (live): for what reaches several orgs, each redacted again with its own view after. */
  commonOnly(): SecretRedactor {
    return this.view(null);
  }

  /** The values this redactor blanks, each with its label. */
  values(): Map<string, string> {
    const byValue = new Map<string, string>();
    this.collectValues(undefined, byValue);
    return byValue;
  }

  /**
   * A redactor that writes each key of `replacements` (found as it is,
   * JSON-escaped or URL-encoded) as its value instead of a label: to put back
   * what a stand-in stood for.
   */
  static replacing(replacements: ReadonlyMap<string, string>): SecretRedactor {
    const r = new SecretRedactor();
    for (const [from, to] of replacements) r.common.set(from, to);
    r.version++;
    return r;
  }

  get empty(): boolean {
    return this.compiled().size === 0;
  }

  redact(text: string): string {
    return redactWith(this.compiled(), text);
  }

  /** Redacts every string in a JSON-like value (keys too); returns the value itself when nothing changed. */
  redactValue<T>(value: T): T {
    if (this.empty) return value;
    return this.walk(value, this.compiled()) as T;
  }

  /**
   * A redactor for one stream of text chunks (a process's stderr, a model's
   * reply), which finds values split across chunks. `keepPartials`: text held
   * back because it could start a value, and that turns out not to, is let
   * out as it is (a reply's text must add up to the redacted whole), instead
   * of blanked (a process cut off mid-secret).
   */
  stream(options: { keepPartials?: boolean } = {}): StreamRedactor {
    return new StreamRedactor(this, options.keepPartials ?? false);
  }

  /** Where a stream may cut `text`: what comes before can be let out, what follows is held (see NeedleSet.safeCut). */
  safeCut(text: string): number {
    return this.compiled().safeCut(text);
  }

  /** Whether a value starts at the beginning of `text`, or `text` may still grow into one. */
  startsValue(text: string): boolean {
    return this.compiled().startsValue(text);
  }

  /**
   * Every string of `root` redacted, keys too, copying only what changed.
   * Iterative, with its own stack: data of any depth is walked whole, never
   * passed through because it is deeper than the call stack allows. A value
   * that holds itself is walked once (its inner reference is kept as is).
   */
  private walk(root: unknown, needles: NeedleSet): unknown {
    if (typeof root === "string") return redactWith(needles, root);
    if (!isWalkable(root)) return root;
    const onPath = new Set<object>();
    const stack: Frame[] = [new Frame(root)];
    onPath.add(root);
    for (;;) {
      const top = stack[stack.length - 1]!;
      if (top.next < top.size) {
        const i = top.next++;
        const child = top.at(i);
        if (isWalkable(child) && !onPath.has(child)) {
          onPath.add(child);
          stack.push(new Frame(child));
        } else if (typeof child === "string") {
          top.set(i, child, redactWith(needles, child));
        }
        continue;
      }
      stack.pop();
      onPath.delete(top.node);
      const result = top.result(needles);
      const parent = stack[stack.length - 1];
      if (!parent) return result;
      parent.set(parent.next - 1, top.node, result);
    }
  }

  private view(scope: string | null): SecretRedactor {
    let v = this.views.get(scope);
    if (!v) this.views.set(scope, (v = new SecretRedactor(this, scope)));
    return v;
  }

  private compiled(): NeedleSet {
    if (this.needles && this.compiledAt === this.stamp) return this.needles;
    const byText = new Map<string, string>();
    for (const [value, label] of this.values()) {
      for (const form of encodings(value)) {
        if (!byText.has(form) || byText.get(form) === UNNAMED) byText.set(form, label);
      }
    }
    this.needles = new NeedleSet([...byText].map(([text, label]) => ({ text, label })));
    this.compiledAt = this.stamp;
    return this.needles;
  }

  /** Every value `scope` (narrowed by this redactor's own) sees, each with its label (a named one wins). */
  private collectValues(scope: Scope, byValue: Map<string, string>): void {
    const seen = this.scope !== undefined ? this.scope : scope;
    this.parent?.collectValues(seen, byValue);
    const sets = [this.common];
    if (seen === undefined) sets.push(...this.owned.values());
    else if (seen !== null) sets.push(this.owned.get(seen) ?? new Map<string, string>());
    for (const values of sets) {
      for (const [value, label] of values) {
        if (!byValue.has(value) || byValue.get(value) === UNNAMED) byValue.set(value, label);
      }
    }
  }

  private get stamp(): number {
    return this.version + (this.parent?.stamp ?? 0);
  }
}

/**
 * One array or plain object being walked: the next child to look at, and a
 * copy of the children made only once one of them changed.
 */
class Frame {
  readonly keys: string[] | undefined;
  readonly size: number;
  next = 0;
  private out: unknown[] | undefined;

  constructor(readonly node: object) {
    this.keys = Array.isArray(node) ? undefined : Object.keys(node);
    this.size = this.keys ? this.keys.length : (node as unknown[]).length;
  }

  at(i: number): unknown {
    return this.keys ? (this.node as Record<string, unknown>)[this.keys[i]!] : (this.node as unknown[])[i];
  }

  /** Child `i` (which was `was`) is `now` after redaction. */
  set(i: number, was: unknown, now: unknown): void {
    if (!this.out) {
      if (now === was) return;
      this.out = new Array<unknown>(this.size);
      for (let j = 0; j < this.size; j++) this.out[j] = this.at(j);
    }
    this.out[i] = now;
  }

  /** The node itself when nothing in it changed, else a copy with redacted keys and values. */
  result(needles: NeedleSet): unknown {
    if (!this.keys) return this.out ?? this.node;
    const keys = this.keys;
    const redacted = keys.map((k) => redactWith(needles, k));
    if (!this.out && redacted.every((k, i) => k === keys[i])) return this.node;
    const copy: Record<string, unknown> = {};
    redacted.forEach((k, i) => (copy[k] = this.out ? this.out[i] : this.at(i)));
    return copy;
  }
}

/** `text` with every known value blanked. */
function redactWith(needles: NeedleSet, text: string): string {
  return needles.size === 0 || text.length < MIN_SECRET_LENGTH ? text : needles.redact(text);
}

/** Arrays and plain objects are walked; anything else (class instances, Dates, Buffers) is left as it is. */
function isWalkable(value: unknown): value is object {
  if (value === null || typeof value !== "object") return false;
  if (Array.isArray(value)) return true;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** The forms a value takes in recorded text: as is, inside a JSON string, in a URL. */
function encodings(value: string): string[] {
  const forms = new Set([value, JSON.stringify(value).slice(1, -1)]);
  try {
    forms.add(encodeURIComponent(value));
  } catch {
    // a lone surrogate cannot be URL-encoded, nor sent in a URL
  }
  return [...forms];
}
