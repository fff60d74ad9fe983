import { pretty } from "../format";

/** A JSON value, readable and scrollable by keyboard when it is wide. */
export function JsonBlock({ value, label }: { value: unknown; label: string }) {
  return (
    <pre class="json" tabIndex={0} aria-label={label}>
      {pretty(value)}
    </pre>
  );
}
