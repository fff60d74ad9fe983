/**
 * A gate on a real database's statements: once a test arms it, the next
 * statement it names waits, inside its transaction, until the test lets it
 * go. The flow that sent it is held at that point (a claim on its way to the
 * database) while the test makes another flow act beside it, which is how a
 * race between two transactions is made to happen every time.
 *
 * Nothing is faked: every statement still runs on the database, only later.
 */
import type { Db, Row, SqlValue, Tx } from "../../src/store/db.js";

interface Armed {
  matches: (sql: string) => boolean;
  reached: () => void;
  go: Promise<void>;
}

export interface HeldStatement {
  /** Resolves once a statement the gate names has arrived and waits. */
  reached: Promise<void>;
  /** Sends the held statement on. */
  release(): void;
}

export class StatementGate {
  private armed: Armed | undefined;

  /** Holds the next statement whose SQL `matches` says yes to (one statement, once). */
  hold(matches: (sql: string) => boolean): HeldStatement {
    let reached!: () => void;
    let release!: () => void;
    const held: HeldStatement = {
      reached: new Promise<void>((resolve) => (reached = resolve)),
      release: () => release(),
    };
    this.armed = { matches, reached, go: new Promise<void>((resolve) => (release = resolve)) };
    return held;
  }

  /** `db` with its statements, in transactions or not, passing this gate. */
  wrap<D extends Db>(db: D): D {
    const gated = (tx: Tx): Tx => ({
      run: async (sql: string, params?: readonly SqlValue[]) => {
        await this.pass(sql);
        return tx.run(sql, params);
      },
      get: async <R extends Row = Row>(sql: string, params?: readonly SqlValue[]) => {
        await this.pass(sql);
        return tx.get<R>(sql, params);
      },
      all: async <R extends Row = Row>(sql: string, params?: readonly SqlValue[]) => {
        await this.pass(sql);
        return tx.all<R>(sql, params);
      },
    });
    const direct = gated(db);
    return new Proxy(db, {
      get(target, prop) {
        if (prop === "transaction") return <T>(fn: (tx: Tx) => Promise<T>) => target.transaction((tx) => fn(gated(tx)));
        if (prop === "run" || prop === "get" || prop === "all") return direct[prop];
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  private async pass(sql: string): Promise<void> {
    const armed = this.armed;
    if (!armed?.matches(sql)) return;
    this.armed = undefined;
    armed.reached();
    await armed.go;
  }
}
