import { NAME_PATTERN, type WorkerRegister, type WorkerToolDescriptor } from "@wardrik/protocol";
import type { Logger } from "../../log/logger.js";
import type { WorkerConnection } from "./worker-connection.js";
import { differsIn, type WorkerRoutes } from "./worker-routes.js";

const NAME_RULE = "a tool name is 1 to 55 letters, digits, _ or -";

/**
 * What a worker's `register` does to routing. A tool name means one tool
 * per org: a second worker that registers it identically shares the calls;
 * one that registers it with another schema or other safety flags is
 * refused (calls spread over both would fail half the time with "Invalid
 * arguments"), and serves it as soon as the other definition's last worker
 * is gone.
 */
export class WorkerRegistration {
  constructor(
    private readonly routes: WorkerRoutes,
    private readonly connections: ReadonlySet<WorkerConnection>,
    private readonly log: Logger,
  ) {}

  /** Replaces the tools `conn` serves with those of `message`; answers the worker with what was accepted and why the rest was not. */
  register(conn: WorkerConnection, message: WorkerRegister): void {
    const accepted: string[] = [];
    const skipped: { name: string; reason: string }[] = [];
    const tools = new Map<string, WorkerToolDescriptor>();
    const refused = new Map<string, WorkerToolDescriptor>();
    for (const tool of message.tools) {
      if (!NAME_PATTERN.test(tool.name)) skipped.push({ name: tool.name, reason: `invalid name: ${NAME_RULE}` });
      else if (tools.has(tool.name) || refused.has(tool.name)) skipped.push({ name: tool.name, reason: "registered twice by this worker" });
      else {
        const other = this.routes.conflict(conn, tool);
        if (other) {
          refused.set(tool.name, tool);
          const reason = conflictReason(tool.name, other.worker, other.differs);
          skipped.push({ name: tool.name, reason });
          this.log("warn", "worker tool refused: another worker serves the name with another definition", {
            ...conn.describe(),
            tool: tool.name,
            served_by: other.worker.name,
            served_by_worker: other.worker.id,
            differs: other.differs,
          });
        } else {
          tools.set(tool.name, tool);
          accepted.push(tool.name);
        }
      }
    }
    const dropped = [...conn.tools.keys()].filter((name) => !tools.has(name));
    for (const name of dropped) this.routes.remove(conn, name);
    conn.tools = tools;
    conn.refused = refused;
    for (const name of accepted) this.routes.add(conn, name);
    conn.send({ type: "registered", accepted, skipped });
    this.log("info", "worker registered tools", { ...conn.describe(), accepted, skipped });
    this.adoptRefused(conn.org, dropped);
  }

  /**
   * Tools no worker serves any more (`names`, of `org`): a worker that was
   * refused one of them, because the worker that just left served it with
   * another definition, serves it now. Returns whether any was taken up.
   */
  adoptRefused(org: string, names: Iterable<string>): boolean {
    let adopted = false;
    for (const name of names) {
      if (this.routes.served(org, name)) continue;
      const takers = [...this.connections].filter((c) => c.org === org && c.available && c.refused.has(name));
      const first = takers[0];
      if (!first) continue;
      const definition = first.refused.get(name)!;
      // Every refused worker with the same definition as the first joins it; the others stay refused.
      for (const conn of takers) {
        const own = conn.refused.get(name)!;
        if (differsIn(definition, own) !== undefined) continue;
        conn.refused.delete(name);
        conn.tools.set(name, own);
        this.routes.add(conn, name);
        conn.send({ type: "registered", accepted: [name], skipped: [] });
        this.log("info", "worker tool accepted: the worker with the other definition left", { ...conn.describe(), tool: name });
      }
      adopted = true;
    }
    return adopted;
  }
}

function conflictReason(tool: string, other: WorkerConnection, differs: "schema" | "safety"): string {
  const what = differs === "schema" ? "another schema" : "other safety flags (readOnly, idempotent)";
  return `tool ${tool} is already served by worker ${other.name} with ${what}; stop that worker or give this tool another name (this worker serves it once no worker with the other definition is connected)`;
}
