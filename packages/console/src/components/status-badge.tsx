/** An agent's, turn's or call's status; every badge is as wide as the widest, so a change never moves what is next to it. */
export function StatusBadge({ status }: { status: string }) {
  return (
    <span class={`badge badge-${status}`}>
      {/* A new text for a new status, not the old one rewritten: a text that changes width counts as moved. */}
      <span key={status}>{status.replace("_", " ")}</span>
    </span>
  );
}
