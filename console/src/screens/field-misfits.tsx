import { useQueryClient } from "@tanstack/react-query";
import { Link } from "wouter";
import { problemOf, useApi } from "../api.tsx";
import { ErrorNote } from "../ui/error-note.tsx";
import { MemberName } from "../ui/member-name.tsx";

/**
 * A refused declaration (field_values_invalid): the members whose value does not parse, each
 * linked to its page to fix the value, or cleared here; the declaration can be asked again then.
 */
export function FieldMisfits({ error, fieldKey }: { error: unknown; fieldKey: string }) {
  const problem = problemOf(error);
  if (problem?.code !== "field_values_invalid" || !problem.misfits?.length) return null;
  const more = (problem.count ?? problem.misfits.length) - problem.misfits.length;
  return (
    <div className="misfits">
      <p>Members whose {fieldKey} does not parse:</p>
      <ul>
        {problem.misfits.map((misfit) => (
          <Misfit key={misfit.memberId} fieldKey={fieldKey} {...misfit} />
        ))}
      </ul>
      {more > 0 && <p className="muted">and {more} more.</p>}
    </div>
  );
}

function Misfit({
  fieldKey,
  memberId,
  email,
  value,
}: {
  fieldKey: string;
  memberId: string;
  email: string | null;
  value: string;
}) {
  const { $api, workspaceId } = useApi();
  const queryClient = useQueryClient();
  const clear = $api.useMutation("patch", "/v0/workspaces/{workspaceId}/members/{memberId}", {
    onSuccess: () => queryClient.invalidateQueries(),
  });
  return (
    <li>
      <Link href={`/members?member=${encodeURIComponent(memberId)}`}>
        <MemberName id={memberId} email={email} />
      </Link>{" "}
      holds <q>{value}</q>{" "}
      {clear.isSuccess ? (
        <span className="muted">cleared</span>
      ) : (
        <button
          type="button"
          className="quiet"
          disabled={clear.isPending}
          onClick={() =>
            clear.mutate({ params: { path: { workspaceId, memberId } }, body: { fields: { [fieldKey]: null } } })
          }
        >
          Clear
          <span className="visually-hidden">
            {" "}
            the {fieldKey} of {email ?? memberId}
          </span>
        </button>
      )}
      <ErrorNote error={clear.error} />
    </li>
  );
}
