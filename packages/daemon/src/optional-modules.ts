/**
 * Packages that only some projects use (the MCP SDK, Slack's client, each AI
 * SDK provider) load on first use instead of at start: each costs tens of
 * milliseconds of start time, and a project made by `wardrik init` uses none
 * of them. Every such load goes through here, once per process, so the
 * daemon can say what it loaded and why (`wardrik daemon --log-level debug`).
 */

/** One optional package as the daemon loaded it. */
export interface OptionalModuleLoad {
  /** The package, with the part in parentheses when one package has several (`@modelcontextprotocol/sdk (client)`). */
  module: string;
  /** What needed it first, such as `MCP server "linear"` or `model "local"`. */
  reason: string;
  /** Milliseconds the load took. */
  ms: number;
}

const loads = new Map<string, Promise<unknown>>();
const loaded: OptionalModuleLoad[] = [];
const listeners = new Set<(load: OptionalModuleLoad) => void>();

/**
 * `load()` once per process for `module` (later callers share the first
 * load). A failed load is forgotten, so a later use tries again; its error
 * says which package and what needed it.
 */
export function loadOptionalModule<T>(module: string, reason: string, load: () => Promise<T>): Promise<T> {
  const known = loads.get(module) as Promise<T> | undefined;
  if (known) return known;
  const started = performance.now();
  const loading = load().then(
    (m) => {
      const entry = { module, reason, ms: Math.round(performance.now() - started) };
      loaded.push(entry);
      for (const l of listeners) l(entry);
      return m;
    },
    (err: unknown) => {
      loads.delete(module);
      throw new OptionalModuleError(module, reason, err);
    },
  );
  loads.set(module, loading);
  return loading;
}

/** The optional packages loaded so far in this process, in the order they loaded. */
export function loadedOptionalModules(): readonly OptionalModuleLoad[] {
  return loaded;
}

/** Calls `listener` after each optional package loads; returns the function that stops it. */
export function onOptionalModuleLoaded(listener: (load: OptionalModuleLoad) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** An optional package that could not be loaded: names the package and what needed it. */
export class OptionalModuleError extends Error {
  constructor(
    readonly module: string,
    readonly reason: string,
    cause: unknown,
  ) {
    // A require()'s "not found" lists the files that asked (the bundled daemon requires its optional packages): not for this message.
    const why = cause instanceof Error ? cause.message.replace(/\nRequire stack:\n[\s\S]*$/, "") : String(cause);
    super(`${reason} needs ${module}, which could not be loaded: ${why}`, { cause });
    this.name = "OptionalModuleError";
  }
}
