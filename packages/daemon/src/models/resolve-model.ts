/**
 * Turns a model reference (a `models:` name or `provider/model-id`) into a
 * `LanguageModelV3` with its context window and prices.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { APICallError } from "@ai-sdk/provider";
import type { LanguageModelV3, LanguageModelV3StreamPart, LanguageModelV3StreamResult } from "@ai-sdk/provider";
import { builtinScripts, createScriptedModel, loadScriptFile } from "@wardrik/testing/scripted-model";
import type { Script } from "@wardrik/testing/scripted-model";
import type { ModelEntry } from "../config/types.js";
import { lookupModel } from "./known-models.js";
import type { ModelPrice } from "./known-models.js";
import { lazyModel } from "./lazy-model.js";
import { ModelConfigError } from "./model-config-error.js";
import { loadProviderPackage } from "./provider-packages.js";

export type ModelProvider = ModelEntry["provider"];

export interface ResolvedModel {
  /** The reference as given: a `models:` name or `provider/model-id`. */
  ref: string;
  provider: ModelProvider;
  modelId: string;
  model: LanguageModelV3;
  contextWindow?: number;
  /** USD per million tokens. */
  price?: ModelPrice;
  /** Why every call of this model will fail (no API key), known before the first call. */
  problem?: string;
}

export interface ModelConfig {
  models: Record<string, ModelEntry>;
  /** Entries that cannot be used (`models.NAME` -> why: a secret they name cannot be decrypted). */
  unusable?: Record<string, string>;
  /** The project directory; scripts are read from `<dir>/scripts/NAME.yaml`. */
  dir: string;
}

export interface ResolveModelOptions {
  /** Where provider API keys are read from; defaults to `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Scripts by name for `script/NAME`, tried before script files and built-ins. */
  scripts?: Record<string, Script>;
}

export const MODEL_PROVIDERS: readonly ModelProvider[] = ["openai", "openai-chat", "anthropic", "openai-compatible", "script"];

const KEY_ENV: Partial<Record<ModelProvider, string>> = {
  openai: "OPENAI_API_KEY",
  "openai-chat": "OPENAI_API_KEY",
  anthropic: "ANTHROPIC_API_KEY",
};

export function resolveModel(ref: string, config: ModelConfig, opts: ResolveModelOptions = {}): ResolvedModel {
  const name = Object.hasOwn(config.models, ref) ? ref : undefined;
  const unusable = name === undefined ? undefined : config.unusable?.[`models.${name}`];
  if (unusable !== undefined) throw new ModelConfigError(unusable);
  const entry = name === undefined ? entryFromRef(ref, config) : config.models[ref]!;
  const model = createModel(entry, name, config.dir, opts);
  const known = lookupModel(entry.provider, entry.model);
  const resolved: ResolvedModel = { ref, provider: entry.provider, modelId: entry.model, model };
  const contextWindow = entry.context_window ?? known?.contextWindow;
  if (contextWindow !== undefined) resolved.contextWindow = contextWindow;
  const price = entry.price ?? known?.price;
  if (price !== undefined) resolved.price = price;
  const problem = missingApiKey(entry, name, opts.env ?? process.env);
  if (problem !== undefined) resolved.problem = problem;
  return resolved;
}

/** What is wrong when a provider that needs an API key has none, in config.yaml or the environment. */
function missingApiKey(entry: ModelEntry, name: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  const keyVar = KEY_ENV[entry.provider];
  if (keyVar === undefined || nonEmpty(entry.api_key) !== undefined || nonEmpty(env[keyVar]) !== undefined) return undefined;
  const label = name === undefined ? `"${entry.provider}/${entry.model}"` : `"${name}" (${entry.provider}/${entry.model})`;
  const fix =
    name === undefined
      ? `set ${keyVar}, or add an entry with api_key under models: in config.yaml`
      : `set api_key in config.yaml models.${name} or ${keyVar}`;
  return `Model ${label} has no API key: ${fix}`;
}

function entryFromRef(ref: string, config: ModelConfig): ModelEntry {
  const slash = ref.indexOf("/");
  const provider = MODEL_PROVIDERS.find((p) => p === ref.slice(0, slash));
  const modelId = ref.slice(slash + 1);
  if (slash <= 0 || provider === undefined || modelId === "") {
    const names = Object.keys(config.models);
    throw new ModelConfigError(
      `Unknown model "${ref}": it is not a name under models: in config.yaml` +
        (names.length > 0 ? ` (${names.join(", ")})` : "") +
        ` nor provider/model-id with a provider of ${MODEL_PROVIDERS.join(", ")}`,
    );
  }
  return { provider, model: modelId };
}

function createModel(entry: ModelEntry, name: string | undefined, dir: string, opts: ResolveModelOptions): LanguageModelV3 {
  const label = name === undefined ? `"${entry.provider}/${entry.model}"` : `"${name}" (${entry.provider}/${entry.model})`;
  const env = opts.env ?? process.env;
  const keyVar = KEY_ENV[entry.provider];
  const apiKey = nonEmpty(entry.api_key) ?? (keyVar === undefined ? undefined : nonEmpty(env[keyVar]));
  const baseURL = nonEmpty(entry.base_url);

  // Not an error yet: a daemon with an unused, keyless model must still start (agents using it are warned about).
  const noKey = missingApiKey(entry, name, env);
  if (noKey !== undefined) return failingModel(entry, noKey);

  // The provider's package loads on the model's first call; `Model ${label}` is what its error names.
  const needs = `Model ${label}`;
  const settings = { apiKey, baseURL, headers: entry.headers };
  switch (entry.provider) {
    case "openai":
      return redactingSecret(
        lazyModel("openai.responses", entry.model, async () =>
          (await loadProviderPackage("@ai-sdk/openai", needs)).createOpenAI(settings).responses(entry.model),
        ),
        apiKey,
      );
    case "openai-chat":
      return redactingSecret(
        lazyModel("openai.chat", entry.model, async () =>
          (await loadProviderPackage("@ai-sdk/openai", needs)).createOpenAI(settings).chat(entry.model),
        ),
        apiKey,
      );
    case "anthropic":
      return redactingSecret(
        lazyModel("anthropic.messages", entry.model, async () =>
          (await loadProviderPackage("@ai-sdk/anthropic", needs)).createAnthropic(settings)(entry.model),
        ),
        apiKey,
      );
    case "openai-compatible": {
      if (baseURL === undefined) {
        throw new ModelConfigError(
          name === undefined
            ? `Model ${label} needs a base URL: add an entry under models: in config.yaml with provider: openai-compatible and base_url`
            : `Model ${label} needs base_url: set models.${name}.base_url in config.yaml (e.g. http://127.0.0.1:11434/v1)`,
        );
      }
      const providerName = name ?? "openai-compatible";
      return redactingSecret(
        lazyModel(`${providerName}.chat`, entry.model, async () =>
          (await loadProviderPackage("@ai-sdk/openai-compatible", needs))
            .createOpenAICompatible({ name: providerName, baseURL, apiKey, headers: entry.headers, includeUsage: true })
            .chatModel(entry.model),
        ),
        apiKey,
      );
    }
    case "script":
      // Nothing in a daemon reads a script's recorded calls: kept, the last 1,000 prompts of long conversations
      // held most of a busy daemon's memory (900 MB after 13,000 turns of W1 through HTTP).
      return createScriptedModel(findScript(entry.model, label, dir, opts), { modelId: entry.model, keepCalls: 0 });
    default:
      throw new ModelConfigError(
        `Model ${label} has an unknown provider "${String(entry.provider)}": use one of ${MODEL_PROVIDERS.join(", ")}`,
      );
  }
}

function findScript(scriptName: string, label: string, dir: string, opts: ResolveModelOptions): Script {
  const given = opts.scripts !== undefined && Object.hasOwn(opts.scripts, scriptName) ? opts.scripts[scriptName] : undefined;
  if (given !== undefined) return given;
  // The name becomes a file path: keep it to one plain file name.
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(scriptName)) {
    throw new ModelConfigError(`Model ${label}: "${scriptName}" is not a valid script name (letters, digits, "-", "_", ".")`);
  }
  const file = join(dir, "scripts", `${scriptName}.yaml`);
  if (existsSync(file)) return loadScriptFile(file);
  const builtin = Object.hasOwn(builtinScripts, scriptName) ? builtinScripts[scriptName] : undefined;
  if (builtin !== undefined) return builtin;
  throw new ModelConfigError(
    `Model ${label}: no script "${scriptName}": ${file} does not exist and there is no built-in script of that name (built-in: ${Object.keys(builtinScripts).join(", ")})`,
  );
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

/** A model whose every call fails with `message`. */
function failingModel(entry: ModelEntry, message: string): LanguageModelV3 {
  const fail = () => Promise.reject(new ModelConfigError(message));
  return {
    specificationVersion: "v3",
    provider: entry.provider,
    modelId: entry.model,
    supportedUrls: {},
    doGenerate: fail,
    doStream: fail,
  };
}

/**
 * Keeps the API key out of every error the model reports: some servers echo the
 * Authorization header back in their error bodies, and errors reach logs and events.
 */
function redactingSecret(model: LanguageModelV3, secret: string | undefined): LanguageModelV3 {
  if (secret === undefined) return model;
  return {
    specificationVersion: "v3",
    provider: model.provider,
    modelId: model.modelId,
    get supportedUrls() {
      return model.supportedUrls;
    },
    async doGenerate(options) {
      try {
        return await model.doGenerate(options);
      } catch (err) {
        throw redact(err, secret);
      }
    },
    async doStream(options): Promise<LanguageModelV3StreamResult> {
      let result: LanguageModelV3StreamResult;
      try {
        result = await model.doStream(options);
      } catch (err) {
        throw redact(err, secret);
      }
      const reader = result.stream.getReader();
      const stream = new ReadableStream<LanguageModelV3StreamPart>({
        async pull(controller) {
          try {
            const next = await reader.read();
            if (next.done) controller.close();
            else controller.enqueue(next.value.type === "error" ? { type: "error", error: redact(next.value.error, secret) } : next.value);
          } catch (err) {
            controller.error(redact(err, secret));
          }
        },
        cancel(reason) {
          return reader.cancel(reason);
        },
      });
      return { ...result, stream };
    },
  };
}

function redact(error: unknown, secret: string): unknown {
  const scrub = (text: string) => text.split(secret).join("[redacted]");
  if (typeof error === "string") return scrub(error);
  if (!(error instanceof Error) || !mentions(error, secret)) return error;
  if (APICallError.isInstance(error)) {
    const dataJson = error.data === undefined ? undefined : safeJson(error.data);
    const data = dataJson === undefined ? undefined : (JSON.parse(scrub(dataJson)) as unknown);
    return new APICallError({
      message: scrub(error.message),
      url: scrub(error.url),
      requestBodyValues: error.requestBodyValues,
      statusCode: error.statusCode,
      responseHeaders:
        error.responseHeaders === undefined
          ? undefined
          : Object.fromEntries(Object.entries(error.responseHeaders).map(([k, v]) => [k, scrub(v)])),
      responseBody: error.responseBody === undefined ? undefined : scrub(error.responseBody),
      isRetryable: error.isRetryable,
      data,
    });
  }
  // The cause is dropped: it is where the secret came from.
  const copy = new Error(scrub(error.message));
  copy.name = error.name;
  return copy;
}

function mentions(error: Error, secret: string): boolean {
  const e = error as Error & { url?: unknown; responseBody?: unknown; responseHeaders?: unknown; data?: unknown };
  const cause = error.cause instanceof Error ? `${error.cause.message} ${error.cause.stack ?? ""}` : String(error.cause ?? "");
  const texts = [error.message, error.stack ?? "", String(e.url ?? ""), String(e.responseBody ?? ""), cause];
  texts.push(safeJson(e.responseHeaders) ?? "", safeJson(e.data) ?? "");
  return texts.some((t) => t.includes(secret));
}

function safeJson(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}
