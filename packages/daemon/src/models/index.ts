export { KNOWN_MODELS, lookupModel } from "./known-models.js";
export type { KnownModel, ModelPrice } from "./known-models.js";
export { MODEL_PROVIDERS, ModelConfigError, resolveModel } from "./resolve-model.js";
export type { ModelConfig, ModelProvider, ResolveModelOptions, ResolvedModel } from "./resolve-model.js";
