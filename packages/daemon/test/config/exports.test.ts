import { expect, it } from "vitest";
import * as config from "../../src/config/index.js";

it("pins the public runtime exports of config/", () => {
  expect(Object.keys(config).sort()).toEqual([
    "AGENT_DEFAULTS",
    "CONFIG_FILE",
    "ConfigError",
    "DEFAULT_HOST",
    "DEFAULT_LEASE_SECONDS",
    "DEFAULT_PORT",
    "Source",
    "formatKeyPath",
    "loadAgentsDir",
    "loadConfig",
    "parseAgentFile",
    "parseConfig",
    "parseYamlSource",
    "plainSource",
    "validateAgentDefinition",
  ]);
});
