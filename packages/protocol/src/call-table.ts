/**
 * Entries by call ID for per-call bookkeeping: one added and one removed per
 * call, a few dozen live at a time (often none between calls).
 *
 * A Map. It once was a null-prototype object in dictionary mode, for fear
 * that a Map's retired hash tables would drag calls' objects into the old
 * generation; measured on Node 20 it is the object that costs: every key set
 * on it is internalized (call IDs are unique, so V8's string table grows by
 * one string a call, and only a full mark-compact shrinks it), and every read
 * looks the key up in that table first. With a Map a set, two reads and a
 * delete cost about a quarter of that, and 2 million calls needed no
 * mark-compact at all (the object needed five).
 *
 * The Map holds one entry of its own, under a key no ID can be (a symbol):
 * V8 shrinks a Map whose entries fall under a quarter of its capacity, and a
 * table that goes from one entry to none on every call (a worker's, whose
 * tools answer at once) would otherwise get a new hash table on every delete.
 */
const KEEP: unique symbol = Symbol("kept entry");

export class CallTable<T> {
  private readonly table = new Map<string | typeof KEEP, T | undefined>([[KEEP, undefined]]);

  get size(): number {
    return this.table.size - 1;
  }

  get(id: string): T | undefined {
    return this.table.get(id);
  }

  set(id: string, value: T): void {
    this.table.set(id, value);
  }

  delete(id: string): void {
    this.table.delete(id);
  }

  values(): T[] {
    const out: T[] = [];
    for (const [id, value] of this.table) if (id !== KEEP) out.push(value as T);
    return out;
  }
}
