/** Which `${env:}` values of config.yaml are credentials, to be blanked wherever they show: what config.yaml says they are for. */
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import { carriesCredentials } from "../../src/config/credential-keys.js";
import { formatKeyPath } from "../../src/config/yaml-source.js";

const CONFIG = `
org: \${env:ORG}
listen: 127.0.0.1:7373
models:
  m: { provider: openai-compatible, model: "\${env:MODEL_ID}", base_url: http://127.0.0.1:9/v1, api_key: "\${env:API_KEY}", headers: { x-key: "\${env:MODEL_HEADER}" } }
mcp:
  stdio:
    command: \${env:SERVER_BIN}
    args: [--region, "\${env:AFTER_FLAG}", "\${env:POSITIONAL}"]
    env: { TOKEN: "\${env:SERVER_ENV}" }
    orgs: ["\${env:ORG}"]
  remote:
    url: https://mcp.example.com/mcp?key=\${env:URL_KEY}
    headers: { Authorization: "Bearer \${env:HEADER_TOKEN}" }
telemetry:
  endpoint: http://127.0.0.1:4318
  headers: { x-api-key: "\${env:OTLP_KEY}" }
`;

describe("credential keys of config.yaml", () => {
  it("everything of an MCP server but its orgs, a model's key and headers, telemetry headers; not the org nor a model's name", () => {
    const env = Object.fromEntries(
      [
        "ORG",
        "MODEL_ID",
        "API_KEY",
        "MODEL_HEADER",
        "SERVER_BIN",
        "AFTER_FLAG",
        "POSITIONAL",
        "SERVER_ENV",
        "URL_KEY",
        "HEADER_TOKEN",
        "OTLP_KEY",
      ].map((n) => [n, n === "ORG" ? "acme" : `value-of-${n}`]),
    );
    const seen: Record<string, boolean> = {};
    parseConfig(CONFIG, "/tmp/p", { env, onResolved: (r) => (seen[`${r.name} at ${formatKeyPath(r.path)}`] = carriesCredentials(r.path)) });
    expect(seen).toEqual({
      "ORG at org": false,
      "MODEL_ID at models.m.model": false,
      "API_KEY at models.m.api_key": true,
      "MODEL_HEADER at models.m.headers.x-key": true,
      "SERVER_BIN at mcp.stdio.command": true,
      "AFTER_FLAG at mcp.stdio.args[1]": true,
      "POSITIONAL at mcp.stdio.args[2]": true,
      "SERVER_ENV at mcp.stdio.env.TOKEN": true,
      "ORG at mcp.stdio.orgs[0]": false,
      "URL_KEY at mcp.remote.url": true,
      "HEADER_TOKEN at mcp.remote.headers.Authorization": true,
      "OTLP_KEY at telemetry.headers.x-api-key": true,
    });
  });
});
