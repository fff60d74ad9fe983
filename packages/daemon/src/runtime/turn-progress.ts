import type { RoundState } from "./round-state.js";

/**
 * What an awake agent's driver remembers of each open turn between commits,
 * none of which the store needs: the model call already announced, the
 * round it saved and is running, the agents/NAME call the turn runs for.
 * Owned by the driver; the turn's steps read and write it through here.
 */
export class TurnProgress {
  private readonly announced = new Map<string, number>();
  private readonly rounds = new Map<string, RoundState>();
  private readonly parentCalls = new Map<string, string | null>();

  /** The iteration whose model.called is recorded for the turn, if this driver recorded one. */
  announcedIteration(run: string): number | undefined {
    return this.announced.get(run);
  }

  /** Whether this driver started the turn or announced its next model call (a turn it did not is recovered or resumed). */
  wasAnnounced(run: string): boolean {
    return this.announced.has(run);
  }

  /** The commit that records model.called for `iteration` is durable. */
  announce(run: string, iteration: number): void {
    this.announced.set(run, iteration);
  }

  /** The round this driver saved for the turn and is running. */
  round(run: string): RoundState | undefined {
    return this.rounds.get(run);
  }

  saveRound(run: string, state: RoundState): void {
    this.rounds.set(run, state);
  }

  /** The agents/NAME call the turn runs for (null: none); undefined when not read yet. */
  parentCall(run: string): string | null | undefined {
    return this.parentCalls.get(run);
  }

  rememberParentCall(run: string, parentCall: string | null): void {
    this.parentCalls.set(run, parentCall);
  }

  /** The driver stopped advancing the turn (it ended, parked or was stopped): its announcement and round go. */
  stopped(run: string): void {
    this.announced.delete(run);
    this.rounds.delete(run);
  }

  /** The turn ended: nothing of it is kept. */
  ended(run: string): void {
    this.parentCalls.delete(run);
  }
}
