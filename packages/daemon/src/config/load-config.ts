import { readFileSync } from "node:fs";
import path from "node:path";
import { isValidName } from "@wardrik/protocol";
import { DEFAULT_HOST, DEFAULT_PORT, type McpServerEntry, type ModelEntry, type ProjectConfig, type SubscriberEntry } from "./types.js";
import {
  type KeyPath,
  type Source,
  formatKeyPath,
  parseYamlSource,
  readList,
  readMap,
  readNumber,
  readRequired,
  readString,
} from "./yaml-source.js";

export interface LoadConfigOptions {
  /** Where `${env:NAME}` looks; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Where `${secret:NAME}` looks; without it every secret reference is an error. */
  secret?: (name: string) => string | undefined;
}

export const CONFIG_FILE = "config.yaml";
const DEFAULT_DATABASE = ".wardrik/wardrik.db";

/** Tool namespaces Wardrik itself provides. */
const RESERVED_NAMESPACES = ["files", "workers"];
const TOP_KEYS = ["org", "listen", "database", "model", "models", "mcp", "policy", "subscribers"];
const MODEL_KEYS = ["provider", "model", "base_url", "api_key", "headers", "context_window", "price"];
const PROVIDERS = ["openai", "openai-chat", "anthropic", "openai-compatible", "script"] as const;
const PRICE_KEYS = ["input", "output", "cached_input"];
const MCP_STDIO_KEYS = ["command", "args", "env"];
const MCP_HTTP_KEYS = ["url", "headers"];
const SUBSCRIBER_KEYS = ["url", "secret", "types"];
const NAME_RULE = "1-55 letters, digits, _ or -";

/** Reads `dir/config.yaml`; a missing file gives every default. */
export function loadConfig(dir: string, options: LoadConfigOptions = {}): ProjectConfig {
  let text = "";
  try {
    text = readFileSync(path.join(dir, CONFIG_FILE), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  return parseConfig(text, dir, options);
}

/** Parses config.yaml text as if it were in `dir`. */
export function parseConfig(text: string, dir: string, options: LoadConfigOptions = {}): ProjectConfig {
  const src = parseYamlSource(text, CONFIG_FILE);
  const r = new ConfigReader(src, options);
  const root = path.resolve(dir);
  const top = src.value === null || src.value === undefined ? {} : readMap(src, [], src.value, TOP_KEYS);

  const models = top.models === undefined ? {} : r.models(top.models);
  const config: ProjectConfig = {
    dir: root,
    org: top.org === undefined ? "default" : r.name(["org"], top.org),
    listen: r.listen(top.listen),
    database: r.database(top.database, root),
    models,
    mcp: top.mcp === undefined ? {} : r.mcp(top.mcp),
    subscribers: top.subscribers === undefined ? [] : r.subscribers(top.subscribers),
  };
  if (top.model !== undefined) {
    const model = r.string(["model"], top.model);
    // A bare name must be a `models:` entry; `provider/model-id` is resolved by models/.
    if (!model.includes("/") && !Object.hasOwn(models, model)) {
      src.fail(["model"], 'model must be "provider/model-id" or the name of an entry in models');
    }
    config.model = model;
  }
  if (top.policy !== undefined) config.policy = r.name(["policy"], top.policy);
  return config;
}

const REFERENCE = /\$(\$?)\{(env|secret):([^}]*)\}/g;

class ConfigReader {
  constructor(
    private readonly src: Source,
    private readonly options: LoadConfigOptions,
  ) {}

  /** A string with `${env:NAME}` / `${secret:NAME}` resolved; `$${` stays a literal `${`. */
  string(path: KeyPath, value: unknown, options: { allowEmpty?: boolean } = {}): string {
    const raw = readString(this.src, path, value, options);
    // Errors here name the reference, never a resolved value: it may be a secret.
    return raw.replace(REFERENCE, (whole, escape: string, kind: string, name: string) => {
      if (escape !== "") return whole.slice(1);
      if (name.trim() === "") return this.src.fail(path, `${formatKeyPath(path)}: \${${kind}:} needs a name`);
      if (kind === "env") {
        const found = (this.options.env ?? process.env)[name];
        if (found === undefined) {
          return this.src.fail(path, `${formatKeyPath(path)}: environment variable ${name} is not set`);
        }
        return found;
      }
      const found = this.options.secret?.(name);
      if (found === undefined) {
        return this.src.fail(path, `${formatKeyPath(path)}: secret ${name} is not set (wardrik secret set ${name})`);
      }
      return found;
    });
  }

  stringMap(path: KeyPath, value: unknown): Record<string, string> {
    const map = readMap(this.src, path, value);
    return Object.fromEntries(Object.entries(map).map(([key, item]) => [key, this.string([...path, key], item, { allowEmpty: true })]));
  }

  stringList(path: KeyPath, value: unknown): string[] {
    return readList(this.src, path, value).map((item, i) => this.string([...path, i], item));
  }

  name(path: KeyPath, value: unknown): string {
    const name = this.string(path, value);
    if (!isValidName(name)) this.src.fail(path, `${formatKeyPath(path)} must be ${NAME_RULE}`);
    return name;
  }

  url(path: KeyPath, value: unknown): string {
    const url = this.string(path, value);
    let protocol: string | undefined;
    try {
      protocol = new URL(url).protocol;
    } catch {
      protocol = undefined;
    }
    if (protocol !== "http:" && protocol !== "https:") {
      this.src.fail(path, `${formatKeyPath(path)} must be an http:// or https:// URL`);
    }
    return url;
  }

  /** `host:port`, `:port`, `[::1]:port`, or a bare port (a number or a string). */
  listen(value: unknown): ProjectConfig["listen"] {
    const path = ["listen"];
    if (value === undefined) return { host: DEFAULT_HOST, port: DEFAULT_PORT };
    const text = typeof value === "number" ? String(value) : this.string(path, value);
    const match = /^(?:(\[[0-9A-Fa-f:.]+\]|[^\s:[\]]*):)?(\d{1,5})$/.exec(text);
    const port = Number(match?.[2]);
    if (match === null || port > 65535) {
      return this.src.fail(path, 'listen must be "host:port", ":port" or a port number (0-65535)');
    }
    const host = (match[1] ?? "").replace(/^\[(.*)\]$/, "$1");
    return { host: host === "" ? DEFAULT_HOST : host, port };
  }

  /** `sqlite:PATH` (made absolute against the project dir) or a postgres URL, kept as is. */
  database(value: unknown, root: string): string {
    if (value === undefined) return `sqlite:${path.resolve(root, DEFAULT_DATABASE)}`;
    const url = this.string(["database"], value);
    if (/^postgres(ql)?:\/\//.test(url)) return url;
    if (url.startsWith("sqlite:") && url.length > "sqlite:".length) {
      const file = url.slice("sqlite:".length);
      return file === ":memory:" ? url : `sqlite:${path.resolve(root, file)}`;
    }
    return this.src.fail(["database"], "database must be sqlite:PATH or a postgres:// URL");
  }

  models(value: unknown): Record<string, ModelEntry> {
    const models: Record<string, ModelEntry> = {};
    for (const [name, raw] of Object.entries(readMap(this.src, ["models"], value))) {
      const path = ["models", name];
      // `provider/model-id` and entry names share the agent's `model` key; a slash would be ambiguous.
      if (name.includes("/")) this.src.fail(path, `model name "${name}" must not contain "/"`);
      models[name] = this.model(path, raw);
    }
    return models;
  }

  private model(path: KeyPath, value: unknown): ModelEntry {
    const map = readMap(this.src, path, value, MODEL_KEYS);
    const provider = this.string([...path, "provider"], readRequired(this.src, path, map, "provider"));
    if (!isProvider(provider)) {
      this.src.fail([...path, "provider"], `${formatKeyPath([...path, "provider"])} must be one of ${PROVIDERS.join(", ")}`);
    }
    const entry: ModelEntry = {
      provider,
      model: this.string([...path, "model"], readRequired(this.src, path, map, "model")),
    };
    if (map.base_url !== undefined) entry.base_url = this.url([...path, "base_url"], map.base_url);
    else if (provider === "openai-compatible") {
      this.src.fail(
        [...path, "base_url"],
        `key "${formatKeyPath([...path, "base_url"])}" is required for provider openai-compatible`,
        path,
      );
    }
    if (map.api_key !== undefined) entry.api_key = this.string([...path, "api_key"], map.api_key);
    if (map.headers !== undefined) entry.headers = this.stringMap([...path, "headers"], map.headers);
    if (map.context_window !== undefined) {
      entry.context_window = readNumber(this.src, [...path, "context_window"], map.context_window, "a positive integer");
    }
    if (map.price !== undefined) entry.price = this.price([...path, "price"], map.price);
    return entry;
  }

  private price(path: KeyPath, value: unknown): NonNullable<ModelEntry["price"]> {
    const map = readMap(this.src, path, value, PRICE_KEYS);
    const usd = (key: string): number => readNumber(this.src, [...path, key], readRequired(this.src, path, map, key), "a number >= 0");
    const price: NonNullable<ModelEntry["price"]> = { input: usd("input"), output: usd("output") };
    if (map.cached_input !== undefined) price.cached_input = usd("cached_input");
    return price;
  }

  mcp(value: unknown): Record<string, McpServerEntry> {
    const servers: Record<string, McpServerEntry> = {};
    for (const [name, raw] of Object.entries(readMap(this.src, ["mcp"], value))) {
      const path = ["mcp", name];
      // The name becomes the tool namespace, and the model sees `namespace__tool`.
      if (!isValidName(name) || name.includes("__")) {
        this.src.fail(path, `MCP server name "${name}" must be ${NAME_RULE}, without "__"`);
      }
      if (RESERVED_NAMESPACES.includes(name)) {
        this.src.fail(path, `MCP server name "${name}" is taken by the built-in ${name} tools; pick another name`);
      }
      servers[name] = this.mcpServer(path, raw);
    }
    return servers;
  }

  private mcpServer(path: KeyPath, value: unknown): McpServerEntry {
    const loose = readMap(this.src, path, value);
    const stdio = loose.command !== undefined;
    if (stdio === (loose.url !== undefined)) {
      this.src.fail(path, `${formatKeyPath(path)} needs either command (stdio) or url (streamable HTTP), not both`);
    }
    const map = readMap(this.src, path, value, stdio ? MCP_STDIO_KEYS : MCP_HTTP_KEYS);
    if (stdio) {
      const server: McpServerEntry = { command: this.string([...path, "command"], map.command) };
      if (map.args !== undefined) server.args = this.stringList([...path, "args"], map.args);
      if (map.env !== undefined) server.env = this.stringMap([...path, "env"], map.env);
      return server;
    }
    const server: McpServerEntry = { url: this.url([...path, "url"], map.url) };
    if (map.headers !== undefined) server.headers = this.stringMap([...path, "headers"], map.headers);
    return server;
  }

  subscribers(value: unknown): SubscriberEntry[] {
    return readList(this.src, ["subscribers"], value).map((raw, i) => {
      const path = ["subscribers", i];
      const map = readMap(this.src, path, raw, SUBSCRIBER_KEYS);
      const entry: SubscriberEntry = { url: this.url([...path, "url"], readRequired(this.src, path, map, "url")) };
      if (map.secret !== undefined) entry.secret = this.string([...path, "secret"], map.secret);
      if (map.types !== undefined) entry.types = this.stringList([...path, "types"], map.types);
      return entry;
    });
  }
}

function isProvider(value: string): value is ModelEntry["provider"] {
  return (PROVIDERS as readonly string[]).includes(value);
}
