const MARKER = Symbol.for("wardrik.model_config_error");

/** A model that is misconfigured: retrying cannot help, the config must change. */
export class ModelConfigError extends Error {
  readonly [MARKER] = true;
  readonly isRetryable = false;

  constructor(message: string) {
    super(message);
    this.name = "ModelConfigError";
  }

  static isInstance(value: unknown): value is ModelConfigError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[MARKER] === true;
  }
}
