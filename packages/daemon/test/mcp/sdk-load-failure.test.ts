/**
 * The MCP SDK loads when a server first connects (src/tools/mcp/load-mcp-client-sdk.ts).
 * If it cannot load, the server's down reason says so rather than blaming the server.
 */
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { describeStartFailure } from "../../src/tools/mcp/describe-failure.js";
import { loadOptionalModule, OptionalModuleError } from "../../src/optional-modules.js";

describe("an MCP SDK that cannot be loaded", () => {
  it("is the reason the server did not start, naming the package and the server", async () => {
    const missing = "@wardrik/no-such-mcp-sdk";
    const err = await loadOptionalModule(missing, 'MCP server "linear"', () => import(missing)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OptionalModuleError);
    expect(describeStartFailure(err, "initialize", 30_000, 'command "npx"')).toMatch(
      /^MCP server "linear" needs @wardrik\/no-such-mcp-sdk, which could not be loaded: Cannot find package '@wardrik\/no-such-mcp-sdk'/,
    );
  });

  it("as the bundled daemon loads it (a require()), names the package without the files that asked for it", async () => {
    const missing = "@wardrik/no-such-mcp-sdk";
    const err = await loadOptionalModule(
      missing,
      'MCP server "linear"',
      async () => createRequire(import.meta.url)(missing) as unknown,
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OptionalModuleError);
    expect((err as Error).message).toBe(`MCP server "linear" needs ${missing}, which could not be loaded: Cannot find module '${missing}'`);
  });
});
