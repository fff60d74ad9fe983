interface Props {
  id: string;
  keys: string[];
  value: string;
  onChange: (key: string) => void;
}

/** Which of the agent's conversations a panel shows; one not started yet is listed too, so it can be picked. */
export function ConversationPicker({ id, keys, value, onChange }: Props) {
  return (
    // The label beside the list, not around it: a wrapping label would lend the list its options' text as its name.
    <span class="inline">
      <label for={id}>Conversation</label>
      <select id={id} value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        {(keys.includes(value) ? keys : [...keys, value]).map((k) => (
          <option key={k} value={k}>
            {k}
          </option>
        ))}
      </select>
    </span>
  );
}
