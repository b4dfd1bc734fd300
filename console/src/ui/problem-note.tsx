import type { Problem } from "@audience-service/client";
import { ErrorNote } from "./error-note.tsx";

function problemOf(error: unknown): Problem | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  if ("code" in error && "status" in error) return error as Problem;
  return undefined;
}

/**
 * ErrorNote, followed by the problem's per-value errors (`errors[].message`) when it lists any:
 * which value of a request was refused and why, e.g. "/body/fields/score: not a number".
 */
export function ProblemNote({ error, id }: { error: unknown; id?: string }) {
  if (error === null || error === undefined) return null;
  const details = problemOf(error)?.errors ?? [];
  return (
    <div className="problem" id={id}>
      <ErrorNote error={error} />
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
