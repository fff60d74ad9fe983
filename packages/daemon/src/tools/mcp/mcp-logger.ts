/** The daemon's logger signature, declared here so the MCP code does not import daemon.ts. */
export type McpLogger = (level: "debug" | "info" | "warn" | "error", msg: string, fields?: Record<string, unknown>) => void;
