/**
 * `${env:NAME}` and `${secret:NAME}` in config.yaml values: resolved before
 * the schema checks the values, so a rule such as "a valid org name" holds
 * for what the daemon will use. `$${` writes a literal `${`.
 */
import { formatKeyPath, type KeyPath, type Source } from "./yaml-source.js";

export interface ReferenceSources {
  /** Where `${env:NAME}` looks; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Where `${secret:NAME}` looks (`path`: the key it is at, which tells whose secret it is); without it every secret reference is an error. */
  secret?: (name: string, path: KeyPath) => string | undefined;
  /** For a secret `secret` does not give: why it cannot be read (it is stored but does not decrypt); undefined when it is not set. */
  unreadableSecret?: (name: string, path: KeyPath) => string | undefined;
  /**
   * A value to use in place of an unreadable secret, so that the rest of the
   * file loads (the caller then turns off what the key belongs to); without
   * it, a reference to an unreadable secret is an error that says why.
   */
  standIn?: (ref: { name: string; path: KeyPath; error: string }) => string;
  /** Told of every reference resolved: which, to what, and at which key (the daemon blanks credentials with it). */
  onResolved?: (ref: ResolvedReference) => void;
}

export interface ResolvedReference {
  kind: "env" | "secret";
  name: string;
  value: string;
  path: KeyPath;
}

/**
 * What a `${secret:NAME}` stands for where its value cannot be known yet (the
 * daemon before it opens the database, the CLI which never reads secrets):
 * a value every secret-valued key accepts, a webhook's "whsec_" + base64 too.
 */
export const SECRET_STAND_IN = "whsec_d2FyZHJpay1ib290c3RyYXA=";

const REFERENCE = /\$(\$?)\{(env|secret):([^}]*)\}/g;

/** A copy of `src.value` with every string value resolved (keys stay as written). */
export function resolveReferences(src: Source, sources: ReferenceSources): unknown {
  return walk(src, sources, src.value, []);
}

function walk(src: Source, sources: ReferenceSources, value: unknown, path: KeyPath): unknown {
  if (typeof value === "string") return resolveString(src, sources, value, path);
  if (Array.isArray(value)) return value.map((item, i) => walk(src, sources, item, [...path, i]));
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = walk(src, sources, item, [...path, key]);
    return out;
  }
  return value;
}

function resolveString(src: Source, sources: ReferenceSources, raw: string, path: KeyPath): string {
  // Errors name the reference, never a resolved value: it may be a secret.
  return raw.replace(REFERENCE, (whole, escape: string, kind: string, name: string) => {
    if (escape !== "") return whole.slice(1);
    if (name.trim() === "") return src.fail(path, `${formatKeyPath(path)}: \${${kind}:} needs a name`);
    if (kind === "env") {
      const found = (sources.env ?? process.env)[name];
      if (found === undefined) return src.fail(path, `${formatKeyPath(path)}: environment variable ${name} is not set`);
      sources.onResolved?.({ kind: "env", name, value: found, path });
      return found;
    }
    const found = sources.secret?.(name, path);
    const unreadable = found === undefined ? sources.unreadableSecret?.(name, path) : undefined;
    if (unreadable !== undefined) {
      if (sources.standIn) return sources.standIn({ name, path, error: unreadable });
      return src.fail(path, `${formatKeyPath(path)}: ${unreadable}`);
    }
    if (found === undefined) return src.fail(path, `${formatKeyPath(path)}: secret ${name} is not set (wardrik secret set ${name})`);
    sources.onResolved?.({ kind: "secret", name, value: found, path });
    return found;
  });
}
