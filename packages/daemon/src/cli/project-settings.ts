import { parseDocument, stringify } from "yaml";
import { ConfigError, parseConfig } from "../config/index.js";
import { SECRET_STAND_IN } from "../config/references.js";
import { readConfigText } from "../config/config-file.js";

/** The three settings of config.yaml the CLI needs. */
export interface ProjectSettings {
  org: string;
  listen: { host: string; port: number };
  /** `sqlite:ABSOLUTE_PATH` or a postgres URL. */
  database: string;
}

const NEEDED = ["org", "listen", "database"] as const;

/**
 * Reads org, listen and database from `dir/config.yaml`. The CLI must keep
 * working while config.yaml has a mistake elsewhere (a running daemon has
 * to be managed, a secret it waits for has to be set), so any other problem
 * is passed to `warn` and only these three keys are read. References the CLI
 * cannot resolve (the daemon's environment, secrets) are not errors either.
 */
export function readProjectSettings(dir: string, warn: (message: string) => void): ProjectSettings {
  return projectSettingsOf(readConfigText(dir), dir, warn);
}

/** readProjectSettings of config.yaml's `text`, as if it were in `dir`. */
export function projectSettingsOf(text: string, dir: string, warn: (message: string) => void): ProjectSettings {
  const lenient = {
    env: new Proxy(process.env, { get: (target, key) => (typeof key === "string" ? (target[key] ?? "unset") : undefined) }),
    // The CLI never reads secrets; the stand-in passes every check a secret's value must (a webhook's "whsec_" form).
    secret: () => SECRET_STAND_IN,
  };
  try {
    return pick(parseConfig(text, dir, lenient));
  } catch (first) {
    if (!ConfigError.isInstance(first)) throw first;
    let reduced: string;
    try {
      const whole: unknown = parseDocument(text).toJS();
      const top = typeof whole === "object" && whole !== null ? (whole as Record<string, unknown>) : {};
      reduced = stringify(Object.fromEntries(NEEDED.filter((k) => top[k] !== undefined).map((k) => [k, top[k]])));
    } catch {
      throw first;
    }
    let settings: ProjectSettings;
    try {
      settings = pick(parseConfig(reduced, dir, lenient));
    } catch {
      // One of the keys the CLI needs is wrong: the first error names its line.
      throw first;
    }
    warn(`warning: ${first.message} (the CLI reads only org, listen and database, so it goes on)`);
    return settings;
  }
}

function pick(c: ProjectSettings): ProjectSettings {
  return { org: c.org, listen: c.listen, database: c.database };
}
