import { type FormEvent, useState } from "react";
import { Link } from "wouter";
import { useApi } from "../api.tsx";
import { ErrorNote } from "../ui/error-note.tsx";

/** The contract's limit on an audience's name (AudienceName). */
const NAME_MAX = 200;

/**
 * Merges two audiences into a new one holding both one's members (and following both rules);
 * the two are left as they are. Merge waits for two different audiences and a name.
 */
export function MergeAudiences() {
  const { $api, workspaceId, inWorkspace } = useApi();
  const [first, setFirst] = useState("");
  const [second, setSecond] = useState("");
  const [name, setName] = useState("");
  const [made, setMade] = useState<{ id: string; name: string } | undefined>();
  const audiences = $api.useQuery("get", "/v0/workspaces/{workspaceId}/audiences", {
    params: { path: { workspaceId }, query: { limit: 100 } },
  });
  const merge = $api.useMutation("post", "/v0/workspaces/{workspaceId}/audiences/merge", {
    onSuccess: (result) => {
      setMade({ id: result.id, name: name.trim() });
      setName("");
    },
  });
  const options = audiences.data?.results ?? [];
  const problem =
    first !== "" && first === second
      ? "Choose two different audiences."
      : name.length > NAME_MAX
        ? `A name holds at most ${NAME_MAX} characters.`
        : undefined;
  const ready = first !== "" && second !== "" && name.trim() !== "" && problem === undefined;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    merge.mutate({ ...inWorkspace, body: { name: name.trim(), audienceIds: [first, second] } });
  };
  const picker = (id: string, label: string, value: string, set: (v: string) => void) => (
    <>
      <label htmlFor={id}>{label}</label>
      <select
        id={id}
        value={value}
        onChange={(event) => {
          set(event.target.value);
          merge.reset();
        }}
      >
        <option value="">Choose…</option>
        {options.map((audience) => (
          <option key={audience.id} value={audience.id}>
            {audience.name}
          </option>
        ))}
      </select>
    </>
  );
  return (
    <details className="panel">
      <summary>Merge two audiences</summary>
      <form onSubmit={submit} aria-label="Merge two audiences">
        <p className="muted">
          A new audience with the members of both, which keeps following both rules. The two stay as they are.
        </p>
        <div className="inline-form">
          {picker("merge-first", "Merge", first, setFirst)}
          {picker("merge-second", "with", second, setSecond)}
        </div>
        <div className="inline-form">
          <label htmlFor="merge-name">Name of the merged audience</label>
          <input
            id="merge-name"
            value={name}
            aria-describedby="merge-note"
            onChange={(event) => {
              setName(event.target.value);
              merge.reset();
            }}
          />
          <button type="submit" disabled={!ready || merge.isPending}>
            Merge
          </button>
        </div>
        <p id="merge-note" className={problem ? "error" : "visually-hidden"}>
          {problem ?? ""}
        </p>
        <ErrorNote error={merge.error ?? audiences.error} />
        {made && (
          <p className="good" role="status">
            Merged into <Link href={`/audiences/${made.id}`}>{made.name}</Link>.
          </p>
        )}
      </form>
    </details>
  );
}
