/**
 * `wardrik secret set` while the daemon is stopped: a daemon whose config.yaml
 * needs a secret cannot start until the secret exists, so the CLI writes it to
 * the project's database itself. And the CLI reads only org, listen and
 * database from config.yaml: a mistake elsewhere is a warning, not a failure.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { databaseContents, databaseLabel, projectDatabaseUrl } from "../helpers/database-contents.js";
import { createProject, type TestProject } from "../helpers/spawn-daemon.js";

const VALUE = "sk-offline-0123456789-never-in-clear";
let p: TestProject;

beforeAll(async () => {
  p = await createProject({
    start: false,
    models: {
      keyed: { provider: "openai-compatible", model: "m", base_url: "http://127.0.0.1:9/v1", api_key: "${secret:MODEL_KEY}" },
    },
  });
});

describe.sequential("secrets without a running daemon", () => {
  it("the daemon refuses to start without the secret; secret set writes it to the database; then the daemon starts", async () => {
    await expect(p.start()).rejects.toThrow(/secret MODEL_KEY is not set \(wardrik secret set MODEL_KEY\)/);

    const set = await p.cli(["secret", "set", "MODEL_KEY"], { input: VALUE + "\n" });
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toBe("Stored secret MODEL_KEY. Restart the daemon for config.yaml to use it.\n");
    const database = projectDatabaseUrl(p.dir, p.read("config.yaml"));
    expect(set.stderr).toContain(`(The daemon did not answer, so it was written to ${databaseLabel(database)} directly.)`);
    const ls = await p.cli(["secret", "ls", "--json"]);
    expect(JSON.parse(ls.stdout)).toEqual({ secrets: ["MODEL_KEY"], unreadable: [] });

    await p.start();
    // Through the daemon now.
    const viaDaemon = await p.cli(["secret", "ls", "--json"]);
    expect(viaDaemon.stderr).toBe("");
    expect(JSON.parse(viaDaemon.stdout)).toEqual({ secrets: ["MODEL_KEY"], unreadable: [] });
    // Stored encrypted, as the daemon stores it.
    for (const part of await databaseContents(database))
      expect(part.text.includes(VALUE), `${part.where} holds the secret in clear`).toBe(false);
  });

  it("secret set --json through the running daemon", async () => {
    const r = await p.cli(["secret", "set", "OTHER_KEY", "--json"], { input: "v" });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ name: "OTHER_KEY", stored: true, daemon: true });
  });

  it("a bad secret name or an empty value is a usage error", async () => {
    expect((await p.cli(["secret", "set", "9lives"], { input: "v" })).code).toBe(2);
    const empty = await p.cli(["secret", "set", "EMPTY"], { input: "" });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/no value on standard input/);
  });
});

describe.sequential("config.yaml mistakes the CLI does not need to read", () => {
  it("an unknown key elsewhere in config.yaml is a warning on stderr; the command works", async () => {
    const good = p.read("config.yaml");
    p.write("config.yaml", good + "\nmodles: {}\n");
    try {
      const r = await p.cli(["ls", "--json"]);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual(expect.arrayContaining([expect.objectContaining({ name: "helper" })]));
      expect(r.stderr).toMatch(/^warning: config\.yaml:\d+: .*modles.* \(the CLI reads only org, listen and database, so it goes on\)\n$/);
    } finally {
      p.write("config.yaml", good);
    }
  });

  it("a mistake in a key the CLI needs (listen) is an error naming the line", async () => {
    const good = p.read("config.yaml");
    p.write("config.yaml", good.replace(/^listen:.*$/m, "listen: not-an-address"));
    try {
      const r = await p.cli(["ls"]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/config\.yaml:\d+: listen must be/);
    } finally {
      p.write("config.yaml", good);
    }
  });
});
