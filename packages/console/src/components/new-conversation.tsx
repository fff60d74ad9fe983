import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { messageOf } from "../client/api";
import { useApi } from "../context";

interface Props {
  agentId: string;
  /** The agent's conversations: a new one needs a name none of them has. */
  keys: string[];
  onStarted: (key: string) => void;
  onClose: () => void;
}

/** Starts a conversation: a name and its first message (`POST /v1/agents/{id}/messages` with a new conversation key). */
export function NewConversation({ agentId, keys, onStarted, onClose }: Props) {
  const api = useApi();
  const [name, setName] = useState("");
  const [text, setText] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ field: "name" | "text" | "form"; message: string }>();
  const nameField = useRef<HTMLInputElement>(null);
  useLayoutEffect(() => nameField.current?.focus(), []);

  const start = async (e: Event) => {
    e.preventDefault();
    const key = name.trim();
    const message = text.trim();
    if (key === "") return setError({ field: "name", message: "Give the conversation a name, such as refund-1234." });
    if (keys.includes(key))
      return setError({ field: "name", message: `There is a conversation ${key} already; pick it in the list, or choose another name.` });
    if (message === "") return setError({ field: "text", message: "Write the first message: it starts the conversation." });
    setBusy(true);
    setError(undefined);
    try {
      await api.sendMessage(agentId, key, message);
      onStarted(key);
    } catch (err) {
      setError({ field: "form", message: messageOf(err) });
      setBusy(false);
    }
  };

  return (
    <form class="new-conversation" onSubmit={start} aria-labelledby="new-conversation-title" noValidate>
      <h3 id="new-conversation-title">New conversation</h3>
      <label for="new-conversation-name">Name</label>
      <input
        id="new-conversation-name"
        ref={nameField}
        value={name}
        maxLength={200}
        autoComplete="off"
        spellcheck={false}
        placeholder="refund-1234"
        onInput={(e) => setName((e.target as HTMLInputElement).value)}
        aria-invalid={error?.field === "name" ? true : undefined}
        aria-describedby={error?.field === "name" ? "new-conversation-error" : undefined}
      />
      <label for="new-conversation-message">First message</label>
      <textarea
        id="new-conversation-message"
        rows={3}
        value={text}
        onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
        aria-invalid={error?.field === "text" ? true : undefined}
        aria-describedby={error?.field === "text" ? "new-conversation-error" : undefined}
      />
      {error && (
        <p id="new-conversation-error" class="error" role="alert">
          {error.message}
        </p>
      )}
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          Start conversation
        </button>
        <button type="button" onClick={onClose}>
          Cancel
        </button>
      </div>
    </form>
  );
}
