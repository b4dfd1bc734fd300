import { type FormEvent, useState } from "react";
import { type Session, sessionOf } from "../session.ts";

/**
 * Signing in with a workspace API key (ak_…), kept for this tab only. The key is checked by the
 * first call the console makes; a key that does not even look like one is refused here.
 */
export function SignIn({ onSignIn }: { onSignIn(session: Session): void }) {
  const [text, setText] = useState("");
  const [error, setError] = useState<string | undefined>();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const session = sessionOf(text);
    if (!session) return setError("That is not an API key: a key starts with ak_ and has four parts.");
    onSignIn(session);
  };
  return (
    <main className="sign-in">
      <h1>Audience Service</h1>
      <form onSubmit={submit}>
        <label htmlFor="api-key">Workspace API key</label>
        <input
          id="api-key"
          type="password"
          autoComplete="off"
          spellCheck={false}
          value={text}
          onChange={(event) => setText(event.target.value)}
          aria-invalid={error !== undefined}
          aria-describedby={error ? "api-key-error" : "api-key-hint"}
        />
        <p id="api-key-hint" className="muted">
          The key printed at the server's first start, or one made with <code>keys create</code>. It is kept for this
          tab only.
        </p>
        {error && (
          <p id="api-key-error" className="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit">Sign in</button>
      </form>
    </main>
  );
}
