import { useEffect, useRef } from "preact/hooks";

/**
 * Runs `fn(key)` once per key after `ms` of quiet: a burst of events about one
 * agent makes one request, not one per event.
 */
export function useDebouncedByKey(fn: (key: string) => void, ms: number): (key: string) => void {
  const timers = useRef(new Map<string, ReturnType<typeof setTimeout>>());
  const latest = useRef(fn);
  latest.current = fn;
  useEffect(() => () => timers.current.forEach((t) => clearTimeout(t)), []);
  return (key: string) => {
    const old = timers.current.get(key);
    if (old !== undefined) clearTimeout(old);
    timers.current.set(
      key,
      setTimeout(() => {
        timers.current.delete(key);
        latest.current(key);
      }, ms),
    );
  };
}

/** Re-renders every `ms`, for texts such as "2 min ago". */
export function useTick(ms: number, onTick: () => void): void {
  const latest = useRef(onTick);
  latest.current = onTick;
  useEffect(() => {
    const t = setInterval(() => latest.current(), ms);
    return () => clearInterval(t);
  }, [ms]);
}
