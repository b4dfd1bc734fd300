import { problemOf, problemText } from "../api.tsx";

/**
 * A failed call's message, the API's own `detail`, shown next to what caused it and announced to
 * screen readers as it appears (role=alert); then, when the problem lists them, which values of
 * the request were refused and why (e.g. "/body/fields/score: is not a number"), unless the
 * detail says it already.
 */
export function ErrorNote({ error, id }: { error: unknown; id?: string }) {
  if (error === null || error === undefined) return null;
  const text = problemText(error);
  // An item the detail already says ("name must not be empty.") is not said twice.
  const details = (problemOf(error)?.errors ?? []).filter((item) => !text.includes(item.message));
  return (
    <div className="problem" id={id}>
      <p className="error" role="alert">
        {text}
      </p>
      {details.length > 0 && (
        <ul className="error">
          {details.map((item) => (
            <li key={`${item.pointer} ${item.message}`}>
              <code>{item.pointer}</code>: {item.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
