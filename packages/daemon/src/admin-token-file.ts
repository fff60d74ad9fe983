import { join } from "node:path";

/**
 * Where a project keeps its admin token, under the project's directory. Its
 * own module: the CLI reads the path on every command, and what creates a
 * token (admin-token.ts) loads node:crypto, which a short command should not pay for.
 */
export const ADMIN_TOKEN_FILE = join(".wardrik", "admin-token");
