import { useEffect, useRef, useState } from "preact/hooks";
import { messageOf, type Session } from "../client/api";
import { signInWithToken } from "../session";

interface Props {
  /** A sign-in link is being traded for its token. */
  busy: boolean;
  notice: string | undefined;
  onSignedIn: (r: { session: Session; orgs: string[] }) => void;
}

export function SignIn({ busy, notice, onSignedIn }: Props) {
  const [token, setToken] = useState("");
  const [error, setError] = useState<string>();
  const [working, setWorking] = useState(false);
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => {
    document.title = "Sign in · Wardrik";
    field.current?.focus();
  }, []);

  const submit = async (e: Event) => {
    e.preventDefault();
    if (token.trim() === "") {
      setError("Enter a token: the admin token is in .wardrik/admin-token, or run wardrik console for a sign-in link.");
      return;
    }
    setWorking(true);
    setError(undefined);
    try {
      onSignedIn(await signInWithToken(token.trim()));
    } catch (err) {
      setError(messageOf(err));
      setWorking(false);
    }
  };

  return (
    <main class="sign-in">
      <h1>Wardrik</h1>
      {busy ? (
        <p role="status">Signing in with your link…</p>
      ) : (
        <form onSubmit={submit} class="card" noValidate>
          <p>
            Sign in with a bearer token. <code>wardrik console</code> prints a link that signs you in without one.
          </p>
          <label for="token">Token</label>
          <input
            id="token"
            ref={field}
            type="password"
            autoComplete="off"
            spellcheck={false}
            value={token}
            onInput={(e) => setToken((e.target as HTMLInputElement).value)}
            aria-describedby={error || notice ? "sign-in-error" : "token-help"}
            aria-invalid={error ? true : undefined}
          />
          <p id="token-help" class="help">
            Kept for this tab only; closing it signs you out.
          </p>
          {(error ?? notice) && (
            <p id="sign-in-error" class="error" role="alert">
              {error ?? notice}
            </p>
          )}
          <button type="submit" class="primary" disabled={working}>
            Sign in
          </button>
        </form>
      )}
    </main>
  );
}
