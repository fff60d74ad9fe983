/**
 * A model's provider package loads on the model's first call (see
 * src/models/provider-packages.ts): what the model says before that must be
 * what it says after, and a package that cannot load must say which model
 * needed it.
 */
import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { describe, expect, it } from "vitest";
import type { ModelEntry } from "../../src/config/types.js";
import { lazyModel } from "../../src/models/lazy-model.js";
import { ModelConfigError, resolveModel } from "../../src/models/index.js";
import { loadedOptionalModules, loadOptionalModule } from "../../src/optional-modules.js";

const CALL: LanguageModelV3CallOptions = { prompt: [{ role: "user", content: [{ type: "text", text: "hi" }] }] };

describe("provider packages load on first use", () => {
  const cases: [ModelEntry["provider"], string, string][] = [
    ["openai", "openai.responses", "@ai-sdk/openai"],
    ["openai-chat", "openai.chat", "@ai-sdk/openai"],
    ["anthropic", "anthropic.messages", "@ai-sdk/anthropic"],
    ["openai-compatible", "local.chat", "@ai-sdk/openai-compatible"],
  ];
  it.each(cases)("a %s model names its provider %s before %s loads, as the loaded model does", async (provider, name, pkg) => {
    const config = { models: { local: { provider, model: "m", api_key: "k", base_url: "http://127.0.0.1:9/v1" } }, dir: "/nowhere" };
    const resolved = resolveModel("local", config, { env: {} });
    expect(resolved.model.provider).toBe(name);
    // Reading supportedUrls loads the package; from then on the loaded model answers.
    await resolved.model.supportedUrls;
    expect(resolved.model.provider).toBe(name);
    expect(loadedOptionalModules().map((l) => l.module)).toContain(pkg);
  });

  it("a package that cannot be loaded fails each call with an error that names the model and the package, not retryable", async () => {
    const missing = "@wardrik/no-such-provider";
    const model = lazyModel("nowhere.chat", "m", async () => {
      await loadOptionalModule(missing, 'Model "local" (openai-compatible/m)', () => import(missing));
      throw new Error("unreachable");
    });
    for (const call of [() => model.doStream(CALL), () => model.doGenerate(CALL)]) {
      const err = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(ModelConfigError.isInstance(err)).toBe(true);
      expect((err as ModelConfigError).isRetryable).toBe(false);
      expect((err as Error).message).toMatch(
        /^Model "local" \(openai-compatible\/m\) needs @wardrik\/no-such-provider, which could not be loaded: Cannot find package '@wardrik\/no-such-provider'/,
      );
    }
    expect(loadedOptionalModules().map((l) => l.module)).not.toContain(missing);
  });
});
