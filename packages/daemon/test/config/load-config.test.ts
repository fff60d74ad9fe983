import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError, DEFAULT_PORT, loadConfig, parseConfig } from "../../src/config/index.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "wardrik-config-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function writeConfig(text: string): void {
  writeFileSync(path.join(dir, "config.yaml"), text);
}

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    if (ConfigError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

const parse = (text: string, options?: Parameters<typeof parseConfig>[2]) => parseConfig(text, "/srv/proj", options);
const listenOf = (value: string) => parse(`listen: ${value}\n`).listen;

describe("loadConfig defaults", () => {
  it("gives every default when config.yaml is missing", () => {
    const config = loadConfig(dir);
    expect(config).toEqual({
      dir: path.resolve(dir),
      org: "default",
      listen: { host: "127.0.0.1", port: DEFAULT_PORT },
      database: `sqlite:${path.join(path.resolve(dir), ".wardrik", "wardrik.db")}`,
      models: {},
      mcp: {},
      subscribers: [],
      tool_timeout: 60,
      limits: { org_requests_per_s: 50, org_running_turns: 64, json_depth: 64 },
      worker_grace: 30,
    });
    expect(DEFAULT_PORT).toBe(7373);
    expect(config.model).toBeUndefined();
    expect(config.policy).toBeUndefined();
  });

  it("gives every default for an empty or comment-only file", () => {
    writeConfig("# nothing here yet\n");
    expect(loadConfig(dir).org).toBe("default");
    expect(parse("").listen).toEqual({ host: "127.0.0.1", port: 7373 });
  });

  it("makes a relative project dir absolute", () => {
    const relative = path.relative(process.cwd(), dir);
    expect(loadConfig(relative).dir).toBe(path.resolve(dir));
  });
});

describe("loadConfig with a full file", () => {
  it("reads every key", () => {
    writeConfig(`
org: acme-eu
listen: 0.0.0.0:8080
database: sqlite:data/w.db
model: local
models:
  local:
    provider: openai-compatible
    model: qwen2.5:7b
    base_url: http://127.0.0.1:11434/v1
    api_key: \${env:LOCAL_KEY}
    headers: { X-Team: "\${secret:TEAM}" }
    context_window: 32768
    price: { input: 0.15, output: 0.60, cached_input: 0 }
  fast:
    provider: script
    model: echo
mcp:
  linear:
    command: npx
    args: [-y, linear-mcp]
    env: { TOKEN: "\${secret:LINEAR}" }
  docs:
    url: https://mcp.example.com/mcp
    headers:
      Authorization: Bearer \${env:DOCS_TOKEN}
policy: careful
subscribers:
  - url: https://hooks.example.com/w
    secret: \${secret:HOOK}
    types: [turn.completed, approval.requested]
  - url: http://localhost:9000/
limits:
  org_running_turns: 8
worker_grace: 2.5
`);
    const config = loadConfig(dir, {
      env: { LOCAL_KEY: "lk-1", DOCS_TOKEN: "dt-2" },
      secret: (name) => ({ TEAM: "blue", LINEAR: "lin-3", HOOK: "whsec_aGstNA==" })[name],
    });
    expect(config).toEqual({
      dir: path.resolve(dir),
      org: "acme-eu",
      listen: { host: "0.0.0.0", port: 8080 },
      database: `sqlite:${path.join(path.resolve(dir), "data", "w.db")}`,
      model: "local",
      models: {
        local: {
          provider: "openai-compatible",
          model: "qwen2.5:7b",
          base_url: "http://127.0.0.1:11434/v1",
          api_key: "lk-1",
          headers: { "X-Team": "blue" },
          context_window: 32768,
          price: { input: 0.15, output: 0.6, cached_input: 0 },
        },
        fast: { provider: "script", model: "echo" },
      },
      mcp: {
        linear: { command: "npx", args: ["-y", "linear-mcp"], env: { TOKEN: "lin-3" } },
        docs: { url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer dt-2" } },
      },
      policy: "careful",
      subscribers: [
        {
          url: "https://hooks.example.com/w",
          secret: "whsec_aGstNA==",
          types: ["turn.completed", "approval.requested"],
          retry_for: 86_400,
          timeout: 10,
        },
        { url: "http://localhost:9000/", retry_for: 86_400, timeout: 10 },
      ],
      tool_timeout: 60,
      // A key left out keeps its default.
      limits: { org_requests_per_s: 50, org_running_turns: 8, json_depth: 64 },
      worker_grace: 2.5,
    });
  });

  it("accepts provider/model-id as the default model without a models entry", () => {
    expect(parse("model: openai/gpt-4o\n").model).toBe("openai/gpt-4o");
  });
});

describe("listen", () => {
  it("parses host:port, :port, a bare port and a bracketed IPv6 host", () => {
    expect(listenOf("localhost:9000")).toEqual({ host: "localhost", port: 9000 });
    expect(listenOf('":9001"')).toEqual({ host: "127.0.0.1", port: 9001 });
    expect(listenOf("9002")).toEqual({ host: "127.0.0.1", port: 9002 });
    expect(listenOf('"9003"')).toEqual({ host: "127.0.0.1", port: 9003 });
    expect(listenOf('"[::1]:9004"')).toEqual({ host: "::1", port: 9004 });
    expect(listenOf("127.0.0.1:0")).toEqual({ host: "127.0.0.1", port: 0 });
  });

  it.each(["localhost", "host:", "host:70000", "a:b:1", "-1", "80.5", "host:port"])("rejects %j with the key and line", (value) => {
    const error = configError(() => parse(`org: a\nlisten: "${value}"\n`));
    expect(error.message).toBe('config.yaml:2: listen must be "host:port", ":port" or a port number (0-65535)');
    expect(error.key).toBe("listen");
  });
});

describe("database", () => {
  it("resolves a relative sqlite path against the project dir", () => {
    expect(parse("database: sqlite:db/x.sqlite\n").database).toBe("sqlite:/srv/proj/db/x.sqlite");
    expect(parse("database: sqlite:../shared.db\n").database).toBe("sqlite:/srv/shared.db");
  });

  it("keeps an absolute sqlite path, :memory: and postgres URLs as they are", () => {
    expect(parse("database: sqlite:/var/lib/w.db\n").database).toBe("sqlite:/var/lib/w.db");
    expect(parse('database: "sqlite::memory:"\n').database).toBe("sqlite::memory:");
    const pg = "postgres://u:p@db.example.com:5432/wardrik?sslmode=require";
    expect(parse(`database: ${pg}\n`).database).toBe(pg);
    expect(parse("database: postgresql://localhost/w\n").database).toBe("postgresql://localhost/w");
  });

  it.each(["mysql://localhost/w", "sqlite:", "w.db"])("rejects %j", (value) => {
    const error = configError(() => parse(`\n\ndatabase: "${value}"\n`));
    expect(error.message).toBe("config.yaml:3: database must be sqlite:PATH or a postgres:// URL");
  });
});

describe("${env:} and ${secret:}", () => {
  it("resolves references inside longer strings and several per string", () => {
    const config = parse("org: ${env:ORG}-${env:REGION}\n", { env: { ORG: "acme", REGION: "eu" } });
    expect(config.org).toBe("acme-eu");
  });

  it("reads process.env when no env is given", () => {
    process.env.WARDRIK_TEST_ORG = "from-process";
    try {
      expect(parse("org: ${env:WARDRIK_TEST_ORG}\n").org).toBe("from-process");
    } finally {
      delete process.env.WARDRIK_TEST_ORG;
    }
  });

  it("keeps $${...} as a literal ${...}", () => {
    const config = parse("mcp:\n  x:\n    command: sh\n    args: [-c, 'echo $${env:HOME}']\n", { env: {} });
    expect(config.mcp.x?.args).toEqual(["-c", "echo ${env:HOME}"]);
  });

  it("names file, line and key of a missing environment variable", () => {
    const error = configError(() =>
      parse("models:\n  local:\n    provider: openai\n    model: gpt-4o\n    api_key: ${env:NOPE_KEY}\n", { env: {} }),
    );
    expect(error.message).toBe("config.yaml:5: models.local.api_key: environment variable NOPE_KEY is not set");
    expect(error.file).toBe("config.yaml");
    expect(error.line).toBe(5);
    expect(error.key).toBe("models.local.api_key");
  });

  it("names file, line and key of a missing secret, and works without a secret source", () => {
    const text = "subscribers:\n  - url: https://h.example.com\n    secret: ${secret:HOOK}\n";
    const withSource = configError(() => parse(text, { secret: () => undefined }));
    expect(withSource.message).toBe("config.yaml:3: subscribers[0].secret: secret HOOK is not set (wardrik secret set HOOK)");
    expect(configError(() => parse(text)).line).toBe(3);
  });

  it("never puts a resolved secret or env value in an error message", () => {
    const secret = "sk live/TOPSECRET:42";
    const options = { env: { PORT_VALUE: secret }, secret: () => secret };
    const errors = [
      configError(() => parse("listen: ${secret:ADDR}\n", options)),
      configError(() => parse("listen: ${env:PORT_VALUE}\n", options)),
      configError(() => parse("database: ${secret:DB}\n", options)),
      configError(() => parse("org: ${secret:ORG}\n", options)),
      configError(() => parse("subscribers:\n  - url: ${secret:U}\n", options)),
      configError(() => parse("mcp:\n  x:\n    url: ${secret:U}\n", options)),
      configError(() => parse("models:\n  m:\n    provider: ${secret:P}\n    model: x\n", options)),
    ];
    for (const error of errors) {
      expect(error.message).not.toContain(secret);
      expect(error.message).not.toContain("TOPSECRET");
      expect(error.message).toMatch(/^config\.yaml:\d+: /);
    }
  });
});

describe("errors name the key, the file and the line", () => {
  it("rejects an unknown top-level key", () => {
    const error = configError(() => parse("org: a\nlisten: 80\nmodles: {}\n"));
    expect(error.message).toBe(
      'config.yaml:3: key "modles" is not allowed: did you mean "model" or "models"? (allowed: org, listen, database, model, models, mcp, orgs, policy, tool_timeout, limits, worker_grace, subscribers, deliveries, cluster, slack, telemetry)',
    );
    expect(error.key).toBe("modles");
  });

  it("rejects an unknown nested key at its own line", () => {
    const error = configError(() =>
      parse("models:\n  local:\n    provider: openai\n    model: gpt-4o\n    price:\n      input: 1\n      output: 2\n      cahced: 3\n"),
    );
    expect(error.message).toBe('config.yaml:8: key "models.local.price.cahced" is not allowed (allowed: input, output, cached_input)');
  });

  it("rejects a wrong type at the value's line", () => {
    const error = configError(() =>
      parse("org: a\nmodels:\n  local:\n    provider: openai\n    model: gpt-4o\n    price:\n      input: cheap\n      output: 2\n"),
    );
    expect(error.message).toBe("config.yaml:7: models.local.price.input must be a number");
    expect(error.key).toBe("models.local.price.input");
  });

  it("rejects limits that are not positive, naming the key", () => {
    expect(configError(() => parse("limits:\n  org_running_turns: 2.5\n")).message).toBe(
      "config.yaml:2: limits.org_running_turns must be a positive integer",
    );
    expect(configError(() => parse("limits:\n  org_requests_per_s: 0\n")).message).toBe(
      "config.yaml:2: limits.org_requests_per_s must be a positive number",
    );
  });

  it("rejects negative prices and non-integer context windows", () => {
    const base = "models:\n  m:\n    provider: anthropic\n    model: claude\n";
    expect(configError(() => parse(`${base}    price: { input: -1, output: 1 }\n`)).message).toBe(
      "config.yaml:5: models.m.price.input must be a number >= 0",
    );
    expect(configError(() => parse(`${base}    context_window: 1.5\n`)).message).toBe(
      "config.yaml:5: models.m.context_window must be a positive integer",
    );
  });

  it("reports a missing required key at its parent's line", () => {
    const error = configError(() => parse("org: a\nmodels:\n  local:\n    provider: openai\n"));
    expect(error.message).toBe('config.yaml:3: key "models.local.model" is required');
    expect(error.key).toBe("models.local.model");
  });

  it("rejects an unknown provider and requires base_url for openai-compatible", () => {
    expect(configError(() => parse("models:\n  m:\n    provider: ollama\n    model: x\n")).message).toBe(
      "config.yaml:3: models.m.provider must be one of openai, openai-chat, anthropic, openai-compatible, script",
    );
    expect(configError(() => parse("models:\n  m:\n    provider: openai-compatible\n    model: x\n")).message).toBe(
      'config.yaml:2: key "models.m.base_url" is required for provider openai-compatible',
    );
  });

  it("rejects an invalid org and a default model that names no entry", () => {
    expect(configError(() => parse("org: acme corp\n")).message).toBe("config.yaml:1: org must be 1-55 letters, digits, _ or -");
    expect(configError(() => parse(`org: ${"a".repeat(56)}\n`)).key).toBe("org");
    expect(configError(() => parse("org: a\nmodel: gpt\n")).message).toBe(
      'config.yaml:2: model must be "provider/model-id" or the name of an entry in models',
    );
  });

  it("rejects an mcp entry with both or neither of command and url, and keys of the other kind", () => {
    expect(configError(() => parse("mcp:\n  x:\n    command: a\n    url: http://h\n")).message).toBe(
      "config.yaml:2: mcp.x needs either command (stdio) or url (streamable HTTP), not both",
    );
    expect(configError(() => parse("mcp:\n  x:\n    args: [a]\n")).line).toBe(2);
    expect(configError(() => parse("mcp:\n  x:\n    url: http://h\n    env: {}\n")).message).toBe(
      'config.yaml:4: key "mcp.x.env" is not allowed (allowed: url, headers, oauth, orgs)',
    );
    // orgs: org names, or "*" for every org.
    expect(parse('mcp:\n  x:\n    url: http://h\n    orgs: [acme, "*"]\n').mcp.x!.orgs).toEqual(["acme", "*"]);
    expect(configError(() => parse("mcp:\n  x:\n    command: a\n    orgs: [acme, 'no spaces']\n")).message).toBe(
      'config.yaml:4: mcp.x.orgs[1] must be an org name (1-55 letters, digits, _ or -) or "*"',
    );
    expect(configError(() => parse("mcp:\n  x:\n    url: ftp://h\n")).message).toBe(
      "config.yaml:3: mcp.x.url must be an http:// or https:// URL",
    );
  });

  it("rejects mcp names with __ or invalid characters", () => {
    expect(configError(() => parse("mcp:\n  a__b:\n    command: x\n")).message).toBe(
      'config.yaml:2: name "a__b" in mcp must be 1-55 letters, digits, _ or -, without "__"',
    );
    // A key that is not a plain word is quoted, so the path stays unambiguous.
    expect(configError(() => parse("mcp:\n  a.b:\n    command: x\n")).key).toBe('mcp["a.b"]');
  });

  it("rejects subscribers that are not a list, or items with bad types", () => {
    expect(configError(() => parse("subscribers: {url: http://h}\n")).message).toBe("config.yaml:1: subscribers must be a list");
    expect(configError(() => parse("subscribers:\n  - url: http://h\n    types: [a, 3]\n")).message).toBe(
      "config.yaml:3: subscribers[0].types[1] must be a string",
    );
    // Every problem is listed, one line each.
    expect(configError(() => parse("subscribers:\n  - url: http://h\n  - secret: s\n")).message).toBe(
      'config.yaml:3: key "subscribers[1].url" is required\nconfig.yaml:3: subscribers[1].secret must be "whsec_" followed by a base64 key (Standard Webhooks)',
    );
  });

  it("rejects a top level that is not a mapping", () => {
    expect(configError(() => parse("- a\n- b\n")).message).toBe("config.yaml:1: the top level must be a mapping");
  });

  it("reports invalid YAML with the parser's line", () => {
    writeConfig("org: a\nmodels:\n  local: [1, 2\nmcp: {}\n");
    const error = configError(() => loadConfig(dir));
    expect(error.file).toBe("config.yaml");
    expect(error.line).toBe(4);
    expect(error.message).toMatch(/^config\.yaml:4: invalid YAML: /);
  });
});

describe("mcp names", () => {
  it("refuses a server named like a built-in namespace, with file and line", () => {
    expect(() => parseConfig("mcp:\n  files:\n    command: x\n", "/tmp/p")).toThrow(
      /config.yaml:2: name "files" in mcp is taken by the built-in files tools/,
    );
  });

  it("refuses the names of the built-in person and agents tools too (a server by either name would clash with them at start)", () => {
    for (const name of ["person", "agents"])
      expect(() => parseConfig(`mcp:\n  ${name}:\n    command: x\n`, "/tmp/p")).toThrow(
        new RegExp(`config.yaml:2: name "${name}" in mcp is taken by the built-in ${name} tools`),
      );
  });
});

describe("orgs: an org's own MCP servers", () => {
  const ACME = "orgs:\n  acme:\n    mcp:\n      search:\n        command: s\n        env: { KEY: '${secret:KEY}' }\n";

  it("reads each org's servers, and resolves their ${secret:} from that org's secrets (the key's path tells whose)", () => {
    const asked: string[] = [];
    const config = parse(ACME, {
      secret: (name, at) => {
        asked.push(`${at.join(".")}=${name}`);
        return at[0] === "orgs" && at[1] === "acme" ? "acme-value" : undefined;
      },
    });
    expect(config.orgs).toEqual({ acme: { mcp: { search: { command: "s", env: { KEY: "acme-value" } } } } });
    expect(asked).toEqual(["orgs.acme.mcp.search.env.KEY=KEY"]);
  });

  it("refuses a name another server has (namespaces are shared by every org), and orgs: on an org's own server", () => {
    expect(configError(() => parse(`mcp:\n  search:\n    command: t\n${ACME}`, { secret: () => "v" })).message).toMatch(
      /orgs\.acme\.mcp\.search .*the name "search" is taken by mcp\.search: tool namespaces are shared by every org, pick another/,
    );
    const twice = "orgs:\n  a:\n    mcp:\n      x:\n        command: s\n  b:\n    mcp:\n      x:\n        command: s\n";
    expect(configError(() => parse(twice)).message).toMatch(/orgs\.b\.mcp\.x .*taken by orgs\.a\.mcp\.x/);
    const granted = "orgs:\n  a:\n    mcp:\n      x:\n        command: s\n        orgs: [b]\n";
    expect(configError(() => parse(granted)).message).toMatch(
      /orgs\.a\.mcp\.x\.orgs cannot be used here: the server belongs to org a alone/,
    );
  });
});
