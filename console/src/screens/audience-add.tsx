import { keepPreviousData } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useApi } from "../api.tsx";
import { ErrorNote } from "../ui/error-note.tsx";

const SHOWN = 5;
/** Enough of an e-mail address to send: the API checks it in full. */
const LOOKS_LIKE_EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * Adds people to an audience by hand: found among the workspace's members (by e-mail, name, role
 * or company), or by an e-mail address, which adds the member who has it or creates one.
 */
export function AddPeople({ audienceId, name }: { audienceId: string; name: string }) {
  const { $api, workspaceId } = useApi();
  const [text, setText] = useState("");
  const term = text.trim();
  const found = $api.useQuery(
    "get",
    "/v0/workspaces/{workspaceId}/members",
    { params: { path: { workspaceId }, query: { limit: SHOWN, search: term } } },
    { enabled: term.length >= 2, placeholderData: keepPreviousData },
  );
  const add = $api.useMutation("post", "/v0/workspaces/{workspaceId}/audiences/{audienceId}/members");
  const path = { params: { path: { workspaceId, audienceId } } };
  const [added, setAdded] = useState<string | undefined>();
  const addOne = (body: { memberIds: string[] } | { members: { email: string }[] }, who: string) =>
    add.mutate({ ...path, body }, { onSuccess: () => setAdded(who) });
  const matches = term.length >= 2 ? (found.data?.results ?? []) : [];
  const exact = matches.some((member) => member.email?.toLowerCase() === term.toLowerCase());
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (LOOKS_LIKE_EMAIL.test(term) && !exact) addOne({ members: [{ email: term }] }, term);
  };
  return (
    <section className="panel" aria-labelledby="add-people-heading">
      <h2 id="add-people-heading">Add people by hand</h2>
      <form className="inline-form" onSubmit={submit}>
        <label htmlFor="add-people">Find or type an e-mail</label>
        <input
          id="add-people"
          type="search"
          value={text}
          placeholder="E-mail, name, role or company"
          aria-describedby="add-people-note"
          onChange={(event) => {
            setText(event.target.value);
            add.reset();
            setAdded(undefined);
          }}
        />
      </form>
      <p id="add-people-note" className="muted">
        People added by hand stay in {name} whatever its rule says.
      </p>
      {matches.length > 0 && (
        <ul className="picks" aria-label="Matching members">
          {matches.map((member) => {
            const who = member.email ?? member.id;
            return (
              <li key={member.id}>
                <span>
                  {who}
                  {member.fields.firstName && <span className="muted"> · {member.fields.firstName}</span>}
                </span>
                <button
                  type="button"
                  className="quiet"
                  disabled={add.isPending}
                  onClick={() => addOne({ memberIds: [member.id] }, who)}
                >
                  Add<span className="visually-hidden"> {who}</span>
                </button>
              </li>
            );
          })}
        </ul>
      )}
      {term.length >= 2 && found.data && matches.length === 0 && !LOOKS_LIKE_EMAIL.test(term) && (
        <p className="muted">No member matches. Type a whole e-mail address to add someone new.</p>
      )}
      {LOOKS_LIKE_EMAIL.test(term) && !exact && (
        <button type="button" disabled={add.isPending} onClick={() => addOne({ members: [{ email: term }] }, term)}>
          Add {term}
        </button>
      )}
      {added && add.data && (
        <output className="good">
          {add.data.added === 0 ? `${added} was already in ${name}.` : `${added} added to ${name}.`}
        </output>
      )}
      <ErrorNote error={add.error} />
    </section>
  );
}
