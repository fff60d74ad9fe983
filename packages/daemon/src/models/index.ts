export { KNOWN_MODELS, lookupModel } from "./known-models.js";
export type { KnownModel, ModelPrice } from "./known-models.js";
export { ModelConfigError } from "./model-config-error.js";
export { MODEL_PROVIDERS, resolveModel } from "./resolve-model.js";
export type { ModelConfig, ModelProvider, ResolveModelOptions, ResolvedModel } from "./resolve-model.js";
