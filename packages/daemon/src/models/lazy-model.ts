import type { LanguageModelV3 } from "@ai-sdk/provider";
import { OptionalModuleError } from "../optional-modules.js";
import { ModelConfigError } from "./model-config-error.js";

/**
 * A model whose provider package loads on its first call (see
 * provider-packages.ts). `provider` is the name the real model will report,
 * so what is recorded before the first call (traces) matches what follows.
 */
export function lazyModel(provider: string, modelId: string, load: () => Promise<LanguageModelV3>): LanguageModelV3 {
  let model: LanguageModelV3 | undefined;
  let loading: Promise<LanguageModelV3> | undefined;
  const real = (): Promise<LanguageModelV3> =>
    model
      ? Promise.resolve(model)
      : (loading ??= load().then(
          (m) => (model = m),
          (err: unknown) => {
            loading = undefined;
            // The package is missing or broken: no retry helps, the installation must change.
            throw err instanceof OptionalModuleError ? new ModelConfigError(err.message) : err;
          },
        ));
  return {
    specificationVersion: "v3",
    get provider() {
      return model?.provider ?? provider;
    },
    modelId,
    get supportedUrls() {
      return model ? model.supportedUrls : real().then((m) => m.supportedUrls);
    },
    doGenerate: async (options) => (await real()).doGenerate(options),
    doStream: async (options) => (await real()).doStream(options),
  };
}
