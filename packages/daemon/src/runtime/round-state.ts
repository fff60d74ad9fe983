import type { ToolResultPart } from "../store/message-format.js";
import type { CallRow } from "../store/rows.js";
import { parseStored } from "../store/state-error.js";
import { isFinalCall } from "./call-machine.js";

/**
 * What a driver knows of a round it saved and is running: its calls as saved
 * and each call's result once final. The commit of the last result also
 * appends the round's results to the history, without reading the round back.
 */
export class RoundState {
  private readonly results = new Map<string, { isError: boolean; output: unknown }>();

  constructor(
    readonly run: string,
    readonly round: number,
    readonly calls: readonly CallRow[],
  ) {
    for (const c of calls) {
      if (isFinalCall(c.status))
        this.results.set(c.id, {
          isError: c.status !== "completed",
          output: c.result === null ? null : parseStored(c.result, `call ${c.id} result`),
        });
    }
  }

  call(id: string): CallRow | undefined {
    return this.calls.find((c) => c.id === id);
  }

  /** Records a call's final result (again is harmless: a retried transaction records it twice). */
  settle(id: string, isError: boolean, output: unknown): void {
    this.results.set(id, { isError, output });
  }

  /** Forgets a result whose commit failed. */
  unsettle(id: string): void {
    this.results.delete(id);
  }

  get complete(): boolean {
    return this.calls.every((c) => this.results.has(c.id));
  }

  toolResults(): ToolResultPart[] {
    return this.calls.map((c) => {
      const r = this.results.get(c.id);
      return { modelCallId: c.model_call_id, callId: c.id, tool: c.tool, isError: r?.isError ?? true, output: r?.output ?? null };
    });
  }
}
