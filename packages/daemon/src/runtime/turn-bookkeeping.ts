/**
 * What a turn's driver remembers of a commit once it is durable: the model
 * call it announced, a turn that ended. Its own module so that the steps of a
 * turn (model step, budget, round runner, control) reach it without
 * importing the turn driver, which imports them.
 */
import type { TurnRow } from "../store/rows.js";
import type { Writer } from "../store/store.js";
import type { AgentDriver } from "./agent-driver.js";
import { firstModel, modelRefs } from "./model-fallback.js";

/**
 * Records `model.called` in the commit that makes a model call the next step
 * (turn start, a round's last result), so the record shows the call in
 * flight without a commit of its own.
 */
export function announceModelCall(d: AgentDriver, w: Writer, run: string, iteration: number): void {
  let model: string | undefined;
  try {
    model = firstModel(d).ref;
  } catch {
    model = modelRefs(d.def)[0];
  }
  w.emit(d.ref, "model.called", { model, iteration }, { run });
  w.afterCommit(() => d.progress.announce(run, iteration));
}

/** Forgets a turn once the commit that ended it is durable. */
export function endedIn(d: AgentDriver, w: Writer, turn: Pick<TurnRow, "id" | "conversation_id">): void {
  w.afterCommit(() => {
    d.progress.ended(turn.id);
    d.conversations.turnEnded(turn);
  });
}
