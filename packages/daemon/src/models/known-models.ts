/**
 * Well-known models: context window and USD prices per million tokens.
 *
 * Prices are the providers' public list prices as of writing (2025); they change,
 * so a `models:` entry in config.yaml can override both `price` and `context_window`.
 * `cached_input` is the price of cache-read input tokens.
 */

export interface ModelPrice {
  input: number;
  output: number;
  cached_input?: number;
}

export interface KnownModel {
  provider: "openai" | "anthropic";
  id: string;
  contextWindow: number;
  price: ModelPrice;
  /** Other ids the provider accepts for the same model (e.g. `-0` aliases). */
  aliases?: string[];
}

const OPENAI: KnownModel[] = [
  { provider: "openai", id: "gpt-5", contextWindow: 400_000, price: { input: 1.25, output: 10, cached_input: 0.125 } },
  { provider: "openai", id: "gpt-5-mini", contextWindow: 400_000, price: { input: 0.25, output: 2, cached_input: 0.025 } },
  { provider: "openai", id: "gpt-5-nano", contextWindow: 400_000, price: { input: 0.05, output: 0.4, cached_input: 0.005 } },
  { provider: "openai", id: "gpt-4.1", contextWindow: 1_047_576, price: { input: 2, output: 8, cached_input: 0.5 } },
  { provider: "openai", id: "gpt-4.1-mini", contextWindow: 1_047_576, price: { input: 0.4, output: 1.6, cached_input: 0.1 } },
  { provider: "openai", id: "gpt-4.1-nano", contextWindow: 1_047_576, price: { input: 0.1, output: 0.4, cached_input: 0.025 } },
  { provider: "openai", id: "gpt-4o", contextWindow: 128_000, price: { input: 2.5, output: 10, cached_input: 1.25 } },
  { provider: "openai", id: "gpt-4o-mini", contextWindow: 128_000, price: { input: 0.15, output: 0.6, cached_input: 0.075 } },
  { provider: "openai", id: "o3", contextWindow: 200_000, price: { input: 2, output: 8, cached_input: 0.5 } },
  { provider: "openai", id: "o3-mini", contextWindow: 200_000, price: { input: 1.1, output: 4.4, cached_input: 0.55 } },
  { provider: "openai", id: "o4-mini", contextWindow: 200_000, price: { input: 1.1, output: 4.4, cached_input: 0.275 } },
];

const ANTHROPIC: KnownModel[] = [
  { provider: "anthropic", id: "claude-opus-4-5", contextWindow: 200_000, price: { input: 5, output: 25, cached_input: 0.5 } },
  { provider: "anthropic", id: "claude-sonnet-4-5", contextWindow: 200_000, price: { input: 3, output: 15, cached_input: 0.3 } },
  { provider: "anthropic", id: "claude-haiku-4-5", contextWindow: 200_000, price: { input: 1, output: 5, cached_input: 0.1 } },
  { provider: "anthropic", id: "claude-opus-4-1", contextWindow: 200_000, price: { input: 15, output: 75, cached_input: 1.5 } },
  {
    provider: "anthropic",
    id: "claude-opus-4",
    aliases: ["claude-opus-4-0"],
    contextWindow: 200_000,
    price: { input: 15, output: 75, cached_input: 1.5 },
  },
  {
    provider: "anthropic",
    id: "claude-sonnet-4",
    aliases: ["claude-sonnet-4-0"],
    contextWindow: 200_000,
    price: { input: 3, output: 15, cached_input: 0.3 },
  },
  { provider: "anthropic", id: "claude-3-7-sonnet", contextWindow: 200_000, price: { input: 3, output: 15, cached_input: 0.3 } },
  { provider: "anthropic", id: "claude-3-5-sonnet", contextWindow: 200_000, price: { input: 3, output: 15, cached_input: 0.3 } },
  { provider: "anthropic", id: "claude-3-5-haiku", contextWindow: 200_000, price: { input: 0.8, output: 4, cached_input: 0.08 } },
];

export const KNOWN_MODELS: readonly KnownModel[] = [...OPENAI, ...ANTHROPIC];

// Only a date or `-latest` may follow a known id: `gpt-4o-2024-08-06` is gpt-4o,
// but `gpt-4o-audio-preview` is a different model with different prices.
const DATED_SUFFIX = /^-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$/;

/**
 * The known model for a provider's model id, allowing dated ids
 * (`claude-sonnet-4-5-20250929`, `gpt-4o-mini-2024-07-18`). `openai-chat` shares
 * OpenAI's table; other providers have none.
 */
export function lookupModel(provider: string, modelId: string): KnownModel | undefined {
  const table = provider === "openai" || provider === "openai-chat" ? OPENAI : provider === "anthropic" ? ANTHROPIC : [];
  for (const model of table) {
    for (const id of [model.id, ...(model.aliases ?? [])]) {
      if (modelId === id || (modelId.startsWith(id) && DATED_SUFFIX.test(modelId.slice(id.length)))) return model;
    }
  }
  return undefined;
}
