import { useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { Link } from "wouter";
import { useApi } from "../api.tsx";
import { AddToAudience } from "../ui/add-to-audience.tsx";
import { ErrorNote } from "../ui/error-note.tsx";
import { fieldKeyProblem } from "../ui/field-key.ts";
import { type FieldType, TypedInput } from "../ui/typed-input.tsx";
import { MemberActivities } from "./member-activities.tsx";

const NAMED = ["firstName", "lastName", "role", "company"];

/**
 * One member: its e-mails, every field editable (set a value, remove one), the audiences it is in
 * with why (each one it can leave: removed if added by hand, excluded if its rule let it in),
 * added to another by hand, its activities; deleted after a second click.
 */
export function MemberDetail({ memberId, onClose }: { memberId: string; onClose(): void }) {
  const { $api, workspaceId } = useApi();
  const path = { params: { path: { workspaceId, memberId } } };
  const member = $api.useQuery("get", "/v0/workspaces/{workspaceId}/members/{memberId}", path);
  const audiences = $api.useQuery("get", "/v0/workspaces/{workspaceId}/members/{memberId}/audiences", path);
  const declared = $api.useQuery("get", "/v0/workspaces/{workspaceId}/fields", { params: { path: { workspaceId } } });
  const types = new Map(declared.data?.results.map((field) => [field.key, field.type]));
  const title = member.data ? (member.data.email ?? member.data.id) : memberId;
  const fields = member.data ? Object.entries(member.data.fields) : [];
  // The named fields first (always present), then the custom ones by key.
  fields.sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b));

  return (
    <section className="panel" aria-labelledby="member-heading">
      <div className="row">
        <h2 id="member-heading">{title}</h2>
        <button type="button" className="quiet" onClick={onClose}>
          Close<span className="visually-hidden"> {title}</span>
        </button>
      </div>
      <ErrorNote error={member.error} />
      {member.data && (
        <>
          <p className="muted">
            <code>{member.data.id}</code> · added {new Date(member.data.createdAt).toLocaleString()}
            {member.data.alternativeEmails.length > 0 && <> · also {member.data.alternativeEmails.join(", ")}</>}
          </p>
          <h3>Fields</h3>
          <div className="field-grid">
            {fields.map(([key, value]) => (
              <FieldEditor
                key={`${key}=${value}`}
                memberId={memberId}
                fieldKey={key}
                value={value}
                type={types.get(key) ?? "string"}
              />
            ))}
          </div>
          <AddField memberId={memberId} />
        </>
      )}
      <h3>Audiences</h3>
      <ErrorNote error={audiences.error} />
      {audiences.data && audiences.data.results.length === 0 && <p className="muted">In no audience.</p>}
      <ul className="memberships">
        {audiences.data?.results.map((audience) => (
          <li key={audience.id}>
            <Link href={`/audiences/${audience.id}`}>{audience.name}</Link>{" "}
            <span className="badge">{audience.reason === "rule" ? "by rule" : "added by hand"}</span>
            {audience.isArchived ? (
              <span className="badge">archived</span>
            ) : (
              <LeaveAudience memberId={memberId} audience={audience} />
            )}
          </li>
        ))}
      </ul>
      <AddToAudience memberIds={[memberId]} label={title} idPrefix="member" />
      <MemberActivities memberId={memberId} />
      <DeleteMember memberId={memberId} title={title} onDeleted={onClose} />
    </section>
  );
}

function rank(key: string): number {
  const index = NAMED.indexOf(key);
  return index === -1 ? NAMED.length : index;
}

/** The PATCH of one member, refetching what shows it once it is done. */
function useUpdateMember(onSuccess?: () => void) {
  const { $api } = useApi();
  const queryClient = useQueryClient();
  return $api.useMutation("patch", "/v0/workspaces/{workspaceId}/members/{memberId}", {
    onSuccess: async () => {
      onSuccess?.();
      await queryClient.invalidateQueries();
    },
  });
}

function FieldEditor({
  memberId,
  fieldKey,
  value,
  type,
}: {
  memberId: string;
  fieldKey: string;
  value: string;
  type: FieldType;
}) {
  const { workspaceId } = useApi();
  const [draft, setDraft] = useState(value);
  const update = useUpdateMember();
  const named = NAMED.includes(fieldKey);
  const errorId = `field-error-${fieldKey}`;
  const send = (next: string | null) =>
    update.mutate({ params: { path: { workspaceId, memberId } }, body: { fields: { [fieldKey]: next } } });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    send(draft);
  };
  return (
    <>
      <label className="key" htmlFor={`field-${fieldKey}`}>
        {fieldKey}
      </label>
      <form className="inline-form" onSubmit={submit}>
        <TypedInput
          id={`field-${fieldKey}`}
          type={type}
          value={draft}
          describedBy={errorId}
          onChange={(next) => {
            setDraft(next);
            update.reset();
          }}
        />
        <button type="submit" disabled={update.isPending || draft === value}>
          Save<span className="visually-hidden"> {fieldKey}</span>
        </button>
      </form>
      {named ? (
        <span />
      ) : (
        <button type="button" className="quiet" disabled={update.isPending} onClick={() => send(null)}>
          Remove<span className="visually-hidden"> {fieldKey}</span>
        </button>
      )}
      <ErrorNote id={errorId} error={update.error} />
    </>
  );
}

function AddField({ memberId }: { memberId: string }) {
  const { workspaceId } = useApi();
  const [key, setKey] = useState("");
  const [value, setValue] = useState("");
  const update = useUpdateMember(() => {
    setKey("");
    setValue("");
  });
  const keyProblem = fieldKeyProblem(key);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    update.mutate({ params: { path: { workspaceId, memberId } }, body: { fields: { [key.trim()]: value } } });
  };
  return (
    <form className="inline-form" onSubmit={submit} aria-label="Add a field">
      <label htmlFor="new-field-key">New field</label>
      <input
        id="new-field-key"
        value={key}
        placeholder="key"
        aria-invalid={keyProblem !== undefined}
        aria-describedby="new-field-key-note new-field-error"
        onChange={(event) => {
          setKey(event.target.value);
          update.reset();
        }}
      />
      <label htmlFor="new-field-value" className="visually-hidden">
        Value
      </label>
      <input
        id="new-field-value"
        value={value}
        placeholder="value"
        aria-describedby="new-field-error"
        onChange={(event) => {
          setValue(event.target.value);
          update.reset();
        }}
      />
      <button type="submit" disabled={update.isPending || key.trim() === "" || keyProblem !== undefined}>
        Add
      </button>
      {keyProblem && (
        <p className="error" id="new-field-key-note">
          {keyProblem}
        </p>
      )}
      <ErrorNote id="new-field-error" error={update.error} />
    </form>
  );
}

/**
 * Takes the member out of one audience by hand. In an audience with a rule, the member then
 * stays out while the rule matches it (excluded); adding it by hand lets it in again.
 */
function LeaveAudience({
  memberId,
  audience,
}: {
  memberId: string;
  audience: { id: string; name: string; reason: "manual" | "rule" };
}) {
  const { $api, workspaceId } = useApi();
  const leave = $api.useMutation("delete", "/v0/workspaces/{workspaceId}/audiences/{audienceId}/members");
  const verb = audience.reason === "rule" ? "Exclude" : "Remove";
  return (
    <>
      {" "}
      <button
        type="button"
        className="quiet small"
        disabled={leave.isPending}
        onClick={() =>
          leave.mutate({ params: { path: { workspaceId, audienceId: audience.id } }, body: { memberIds: [memberId] } })
        }
      >
        {verb}
        <span className="visually-hidden"> from {audience.name}</span>
      </button>
      <ErrorNote error={leave.error} />
    </>
  );
}

function DeleteMember({ memberId, title, onDeleted }: { memberId: string; title: string; onDeleted(): void }) {
  const { $api, inWorkspace } = useApi();
  const [confirming, setConfirming] = useState(false);
  const remove = $api.useMutation("delete", "/v0/workspaces/{workspaceId}/members", { onSuccess: onDeleted });
  return (
    <div className="row">
      {confirming ? (
        <>
          <span role="status">Delete {title} from the workspace and every audience? This cannot be undone.</span>
          <button
            type="button"
            className="danger"
            disabled={remove.isPending}
            onClick={() => remove.mutate({ ...inWorkspace, body: { memberIds: [memberId] } })}
          >
            Yes, delete {title}
          </button>
          <button type="button" className="quiet" onClick={() => setConfirming(false)}>
            Keep
          </button>
        </>
      ) : (
        <button type="button" className="quiet" onClick={() => setConfirming(true)}>
          Delete member<span className="visually-hidden"> {title}</span>
        </button>
      )}
      <ErrorNote error={remove.error} />
    </div>
  );
}
