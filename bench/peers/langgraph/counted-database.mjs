// The SQLite file the LangGraph checkpointer writes to, opened as Wardrik opens its own (WAL,
// synchronous=NORMAL), and counting what Wardrik's SqliteDb counts: statements run and write commits.
import Database from "better-sqlite3";

/**
 * Opens `path` and wraps `prepare` and `transaction` to count. A statement counts once per run/get/all/iterate
 * (BEGIN and COMMIT of a transaction are not statements, as in Wardrik); a commit is a `transaction()` that
 * returns, or a write run outside one (SQLite commits it on its own). Reads outside a transaction are not commits.
 */
export function openCountedDatabase(path) {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  const stats = { statements: 0, commits: 0 };
  const prepare = db.prepare.bind(db);
  db.prepare = (...args) => counted(prepare(...args), db, stats);
  const transaction = db.transaction.bind(db);
  db.transaction = (fn) => {
    const tx = transaction(fn);
    return (...args) => {
      const outermost = !db.inTransaction;
      const result = tx(...args);
      if (outermost) stats.commits++;
      return result;
    };
  };
  return {
    db,
    stats,
    /** Pages in use times page size: what the data kept takes (queried without counting). */
    bytes: () => prepare("SELECT page_count * page_size AS bytes FROM pragma_page_count(), pragma_page_size()").get().bytes,
    synchronous: () => prepare("PRAGMA synchronous").pluck().get(),
    journalMode: () => prepare("PRAGMA journal_mode").pluck().get(),
  };
}

function counted(stmt, db, stats) {
  for (const method of ["run", "get", "all", "iterate"]) {
    const original = stmt[method];
    stmt[method] = (...args) => {
      stats.statements++;
      if (!stmt.reader && !db.inTransaction) stats.commits++;
      return original.apply(stmt, args);
    };
  }
  return stmt;
}
