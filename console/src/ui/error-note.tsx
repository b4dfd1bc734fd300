import { problemText } from "../api.tsx";

/**
 * A failed call's message, the API's own `detail`, shown next to what caused it. Announced to
 * screen readers as it appears (role=alert).
 */
export function ErrorNote({ error, id }: { error: unknown; id?: string }) {
  if (error === null || error === undefined) return null;
  return (
    <p className="error" role="alert" id={id}>
      {problemText(error)}
    </p>
  );
}
