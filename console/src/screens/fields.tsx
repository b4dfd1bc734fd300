import type { components } from "@audience-service/client";
import { useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useApi } from "../api.tsx";
import { DataTable } from "../ui/data-table.tsx";
import { ErrorNote } from "../ui/error-note.tsx";
import { fieldKeyProblem } from "../ui/field-key.ts";
import { FieldMisfits } from "./field-misfits.tsx";
import "./tools.css";

type FieldType = components["schemas"]["FieldType"];
type FieldSummary = components["schemas"]["FieldSummary"];
const TYPES: FieldType[] = ["string", "number", "date", "boolean"];
/** The fields that stay text (the API refuses to type them). */
export const NAMED_FIELDS = ["firstName", "lastName", "role", "company"];

/**
 * The field catalogue: every field members hold (and every declared one), with its type, how many
 * hold it and a few values; declare a type (or change it), or make a field a string again.
 */
export function FieldsScreen() {
  const { $api, inWorkspace } = useApi();
  const list = $api.useQuery("get", "/v0/workspaces/{workspaceId}/fields", inWorkspace);
  return (
    <>
      <h1>Fields</h1>
      <p className="muted">
        Every field your members hold. A custom field is text until it is declared a number, a date or a boolean; then
        every value written to it is checked, and rules compare it as that type. <code>firstName</code>,{" "}
        <code>lastName</code>, <code>role</code> and <code>company</code> stay text.
      </p>
      <DeclareField />
      <ErrorNote error={list.error} />
      <DataTable
        label="Fields"
        columns={["Field", "Type", "Members", "Values", "Declared", { label: "Actions", hidden: true }]}
      >
        {list.data?.results.map((field) => (
          <FieldRow key={`${field.key}:${field.type}`} field={field} />
        ))}
      </DataTable>
      {list.isPending && <p className="muted">Loading…</p>}
    </>
  );
}

/** PUT and DELETE of a field, refetching the list (and what else shows fields) once done. */
function useFieldWrites(onDeclared?: () => void) {
  const { $api } = useApi();
  const queryClient = useQueryClient();
  const refresh = () => queryClient.invalidateQueries();
  const declare = $api.useMutation("put", "/v0/workspaces/{workspaceId}/fields/{fieldKey}", {
    onSuccess: async () => {
      onDeclared?.();
      await refresh();
    },
  });
  const remove = $api.useMutation("delete", "/v0/workspaces/{workspaceId}/fields/{fieldKey}", {
    onSuccess: refresh,
  });
  return { declare, remove };
}

function DeclareField() {
  const { workspaceId } = useApi();
  const [key, setKey] = useState("");
  const [type, setType] = useState<FieldType>("number");
  const { declare } = useFieldWrites(() => setKey(""));
  const keyProblem = fieldKeyProblem(key);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    declare.mutate({ params: { path: { workspaceId, fieldKey: key.trim() } }, body: { type } });
  };
  return (
    <form className="inline-form panel" onSubmit={submit} aria-label="Declare a field">
      <label htmlFor="field-key">Field key</label>
      <input
        id="field-key"
        value={key}
        placeholder="e.g. score"
        aria-invalid={keyProblem !== undefined}
        aria-describedby="field-key-note field-declare-error"
        onChange={(event) => {
          setKey(event.target.value);
          declare.reset();
        }}
      />
      <label htmlFor="field-type">Type</label>
      <TypeSelect
        id="field-type"
        value={type}
        onChange={(next) => {
          setType(next);
          declare.reset();
        }}
      />
      <button type="submit" disabled={declare.isPending || key.trim() === "" || keyProblem !== undefined}>
        Declare
      </button>
      {keyProblem && (
        <p className="error" id="field-key-note">
          {keyProblem}
        </p>
      )}
      <ErrorNote id="field-declare-error" error={declare.error} />
      <FieldMisfits error={declare.error} fieldKey={key.trim()} />
    </form>
  );
}

/** The four field types to choose from, for a new field and for a field's row alike. */
function TypeSelect(props: {
  id: string;
  value: FieldType;
  describedBy?: string;
  onChange: (type: FieldType) => void;
}) {
  return (
    <select
      id={props.id}
      value={props.value}
      aria-describedby={props.describedBy}
      onChange={(event) => props.onChange(event.target.value as FieldType)}
    >
      {TYPES.map((option) => (
        <option key={option} value={option}>
          {option}
        </option>
      ))}
    </select>
  );
}

function FieldRow({ field }: { field: FieldSummary }) {
  const { workspaceId } = useApi();
  const [type, setType] = useState<FieldType>(field.type);
  const { declare, remove } = useFieldWrites();
  const path = { params: { path: { workspaceId, fieldKey: field.key } } };
  const errorId = `field-error-${field.key}`;
  const named = NAMED_FIELDS.includes(field.key);
  const change = (event: FormEvent) => {
    event.preventDefault();
    remove.reset();
    declare.mutate({ ...path, body: { type } });
  };
  return (
    <tr>
      <th scope="row">
        <code>{field.key}</code>
      </th>
      <td data-label="Type">
        {named ? (
          "string"
        ) : (
          <form className="inline-form" onSubmit={change}>
            <label htmlFor={`type-${field.key}`} className="visually-hidden">
              Type of {field.key}
            </label>
            <TypeSelect
              id={`type-${field.key}`}
              value={type}
              describedBy={errorId}
              onChange={(next) => {
                setType(next);
                declare.reset();
              }}
            />
            {type !== field.type && (
              <button type="submit" disabled={declare.isPending}>
                Change type<span className="visually-hidden"> of {field.key}</span>
              </button>
            )}
          </form>
        )}
        <ErrorNote id={errorId} error={declare.error ?? remove.error} />
        <FieldMisfits error={declare.error} fieldKey={field.key} />
      </td>
      <td data-label="Members">{field.memberCount.toLocaleString()}</td>
      <td data-label="Values">
        {field.sampleValues.map((value, i) => (
          <span key={value}>
            {i > 0 && ", "}
            <q>{value}</q>
          </span>
        ))}
      </td>
      <td data-label="Declared">{field.createdAt ? new Date(field.createdAt).toLocaleString() : "—"}</td>
      <td>
        {field.createdAt && (
          <button
            type="button"
            className="quiet"
            disabled={remove.isPending}
            onClick={() => {
              declare.reset();
              remove.mutate(path);
            }}
          >
            Delete<span className="visually-hidden"> {field.key}</span>
          </button>
        )}
      </td>
    </tr>
  );
}
