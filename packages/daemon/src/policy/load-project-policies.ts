import type { Logger } from "../log/logger.js";
import { compilePolicy, loadPoliciesDir, type CompiledPolicy } from "./index.js";
import type { Policy } from "./types.js";

/** The project's policies/, each compiled, or the reason it cannot be used (logged as a warning). */
export function loadProjectPolicies(
  dir: string,
  log: Logger,
): Map<string, { policy: Policy; compiled: CompiledPolicy } | { error: string }> {
  const out = new Map<string, { policy: Policy; compiled: CompiledPolicy } | { error: string }>();
  for (const [name, p] of loadPoliciesDir(dir)) {
    if ("error" in p) {
      log("warn", "policy is invalid", { policy: name, error: p.error });
      out.set(name, { error: p.error });
    } else {
      out.set(name, { policy: p, compiled: compilePolicy(p) });
    }
  }
  return out;
}
