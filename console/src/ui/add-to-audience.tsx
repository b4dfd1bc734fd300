import { type FormEvent, useState } from "react";
import { useApi } from "../api.tsx";
import { ErrorNote } from "./error-note.tsx";

/**
 * Adds members (by id) to an audience chosen from a list: by hand, so they stay in whatever its
 * rule says, and a member excluded from it before is let in again. Says what the API did.
 */
export function AddToAudience({
  memberIds,
  label,
  idPrefix,
  onAdded,
}: {
  memberIds: string[];
  /** Who is added, for the button's accessible name ("ada@example.com", "3 selected members"). */
  label: string;
  idPrefix: string;
  onAdded?(): void;
}) {
  const { $api, workspaceId } = useApi();
  const [audienceId, setAudienceId] = useState("");
  const audiences = $api.useQuery("get", "/v0/workspaces/{workspaceId}/audiences", {
    params: { path: { workspaceId }, query: { limit: 100 } },
  });
  const add = $api.useMutation("post", "/v0/workspaces/{workspaceId}/audiences/{audienceId}/members", {
    onSuccess: () => onAdded?.(),
  });
  const chosen = audiences.data?.results.find((audience) => audience.id === audienceId);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    add.mutate({ params: { path: { workspaceId, audienceId } }, body: { memberIds } });
  };
  const selectId = `${idPrefix}-audience`;
  return (
    <form className="inline-form" onSubmit={submit} aria-label={`Add ${label} to an audience`}>
      <label htmlFor={selectId}>Add to audience</label>
      <select
        id={selectId}
        value={audienceId}
        onChange={(event) => {
          setAudienceId(event.target.value);
          add.reset();
        }}
      >
        <option value="">Choose an audience…</option>
        {audiences.data?.results.map((audience) => (
          <option key={audience.id} value={audience.id}>
            {audience.name}
          </option>
        ))}
      </select>
      <button type="submit" disabled={audienceId === "" || memberIds.length === 0 || add.isPending}>
        Add<span className="visually-hidden"> {label}</span>
      </button>
      {add.data && chosen && (
        <output className="good">
          {add.data.added === 0
            ? `Already in ${chosen.name}.`
            : `${add.data.added.toLocaleString()} added to ${chosen.name}${add.data.alreadyMembers > 0 ? `, ${add.data.alreadyMembers.toLocaleString()} already in it` : ""}.`}
        </output>
      )}
      <ErrorNote error={add.error ?? audiences.error} />
    </form>
  );
}
