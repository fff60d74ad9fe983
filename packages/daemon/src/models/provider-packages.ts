/**
 * The AI SDK provider packages, each loaded when a model of its provider is
 * first called (or warmed up once the daemon listens): a project that uses
 * only the scripted model, or only one provider, does not load the others.
 */
import type { ModelEntry } from "../config/types.js";
import type { Logger } from "../log/logger.js";
import { loadOptionalModule } from "../optional-modules.js";

const PACKAGES = {
  "@ai-sdk/openai": () => import("@ai-sdk/openai"),
  "@ai-sdk/anthropic": () => import("@ai-sdk/anthropic"),
  "@ai-sdk/openai-compatible": () => import("@ai-sdk/openai-compatible"),
};

export type ProviderPackage = keyof typeof PACKAGES;
export type ProviderModule<P extends ProviderPackage> = Awaited<ReturnType<(typeof PACKAGES)[P]>>;

const PACKAGE_OF: Partial<Record<ModelEntry["provider"], ProviderPackage>> = {
  openai: "@ai-sdk/openai",
  "openai-chat": "@ai-sdk/openai",
  anthropic: "@ai-sdk/anthropic",
  "openai-compatible": "@ai-sdk/openai-compatible",
};

/** The package a provider's models need; undefined for the scripted model, which is built in. */
export function providerPackageOf(provider: ModelEntry["provider"]): ProviderPackage | undefined {
  return PACKAGE_OF[provider];
}

/** Loads `pkg` once per process; `reason` names the model that needed it first (in its error, and the debug log). */
export function loadProviderPackage<P extends ProviderPackage>(pkg: P, reason: string): Promise<ProviderModule<P>> {
  return loadOptionalModule(pkg, reason, PACKAGES[pkg] as () => Promise<ProviderModule<P>>);
}

/**
 * Loads, in the background, the packages of the providers of models already
 * resolved, so the first model call does not wait for them. A package that
 * fails to load is reported now, naming the model; its calls fail saying the same.
 */
export function warmProviderPackages(models: Iterable<{ ref: string; provider: ModelEntry["provider"] }>, log: Logger): void {
  const first = new Map<ProviderPackage, string>();
  for (const m of models) {
    const pkg = providerPackageOf(m.provider);
    if (pkg && !first.has(pkg)) first.set(pkg, m.ref);
  }
  for (const [pkg, ref] of first) {
    loadProviderPackage(pkg, `Model "${ref}"`).catch((err: unknown) =>
      log("warn", "a model provider package could not be loaded; the models that need it fail", {
        package: pkg,
        err: err instanceof Error ? err.message : String(err),
      }),
    );
  }
}
