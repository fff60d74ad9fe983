/**
 * Entries by ID for per-call bookkeeping. A null-prototype object rather than
 * a Map: with one entry added and removed per call, V8 chains a Map's retired
 * hash tables to their successors, and the chain drags every call's objects
 * into the old generation, multiplying GC time under load.
 */
export class CallTable<T> {
  private table: Record<string, T> = Object.create(null) as Record<string, T>;
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(id: string): T | undefined {
    return this.table[id];
  }

  set(id: string, value: T): void {
    if (this.table[id] === undefined) this.count += 1;
    this.table[id] = value;
  }

  delete(id: string): void {
    if (this.table[id] === undefined) return;
    delete this.table[id];
    this.count -= 1;
    // Dictionaries never shrink; start afresh once empty so a burst does not pin memory.
    if (this.count === 0) this.table = Object.create(null) as Record<string, T>;
  }

  values(): T[] {
    return Object.values(this.table);
  }
}
