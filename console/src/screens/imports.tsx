import type { components } from "@audience-service/client";
import { useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useApi } from "../api.tsx";
import { DataTable } from "../ui/data-table.tsx";
import { ErrorNote } from "../ui/error-note.tsx";
import { FieldMisfits } from "./field-misfits.tsx";
import { ImportJob, isEnded } from "./import-job.tsx";
import { ColumnTypes, customColumnsOf } from "./import-types.tsx";
import "./tools.css";

/** Upload a CSV file of members, follow its job (progress, per-row errors, cancel), and the past imports. */
export function ImportsScreen() {
  const { $api, inWorkspace } = useApi();
  const [followed, setFollowed] = useState<{ id: string; file?: File } | undefined>();
  const past = $api.useQuery("get", "/v0/workspaces/{workspaceId}/imports", inWorkspace);
  return (
    <>
      <h1>Imports</h1>
      <Upload onQueued={(id, file) => setFollowed({ id, file })} />
      {followed && <ImportJob key={followed.id} importId={followed.id} file={followed.file} />}
      <h2 id="recent-imports-heading">Recent imports</h2>
      <ErrorNote error={past.error} />
      {past.data && past.data.results.length > 0 && (
        <DataTable
          labelledBy="recent-imports-heading"
          columns={[
            "File",
            "Started",
            "Status",
            { label: "Rows read", numeric: true },
            { label: "Created", numeric: true },
            { label: "Merged", numeric: true },
            { label: "Rejected", numeric: true },
            { label: "Actions", hidden: true },
          ]}
        >
          {past.data?.results.map((job) => {
            const started = new Date(job.createdAt).toLocaleString();
            // A job uploaded without a name (by another client) is known by its id.
            const file = job.name ?? job.id;
            return (
              <tr key={job.id} className={job.id === followed?.id ? "selected" : ""}>
                <td data-label="File">{file}</td>
                <td data-label="Started">{started}</td>
                <td data-label="Status" className={`status-${job.status}`}>
                  {job.status}
                </td>
                <td data-label="Rows read" className="num">
                  {job.rowsRead.toLocaleString()}
                </td>
                <td data-label="Created" className="num">
                  {job.created.toLocaleString()}
                </td>
                <td data-label="Merged" className="num">
                  {job.merged.toLocaleString()}
                </td>
                <td data-label="Rejected" className="num">
                  {job.rejected.toLocaleString()}
                </td>
                <td>
                  <button type="button" className="quiet" onClick={() => setFollowed({ id: job.id })}>
                    {isEnded(job.status) ? "Details" : "Follow"}
                    <span className="visually-hidden">
                      {" "}
                      of {file}, started {started}
                    </span>
                  </button>
                </td>
              </tr>
            );
          })}
        </DataTable>
      )}
      {past.data && past.data.results.length === 0 && <p className="muted">No imports yet.</p>}
    </>
  );
}

type FieldType = components["schemas"]["FieldType"];

function Upload({ onQueued }: { onQueued(id: string, file: File): void }) {
  const { $api, client, workspaceId } = useApi();
  const queryClient = useQueryClient();
  const [file, setFile] = useState<File | undefined>();
  const [audienceId, setAudienceId] = useState("");
  // The file's custom fields, and the type chosen for each (its current type until changed).
  const [columns, setColumns] = useState<string[]>([]);
  const [chosen, setChosen] = useState<Record<string, FieldType>>({});
  const [declaring, setDeclaring] = useState(false);
  const [refused, setRefused] = useState<{ key: string; error: unknown } | undefined>();
  const catalogue = $api.useQuery("get", "/v0/workspaces/{workspaceId}/fields", { params: { path: { workspaceId } } });
  const current = Object.fromEntries((catalogue.data?.results ?? []).map((field) => [field.key, field.type]));
  const types = { ...current, ...chosen };
  const audiences = $api.useQuery("get", "/v0/workspaces/{workspaceId}/audiences", {
    params: { path: { workspaceId }, query: { limit: 100 } },
  });
  const upload = $api.useMutation("post", "/v0/workspaces/{workspaceId}/imports", {
    onSuccess: async (job, { body }) => {
      onQueued(job.id, body as unknown as File);
      await queryClient.invalidateQueries();
    },
  });
  /** Declares each type chosen that is not the field's type yet; false (and why) at the first refused. */
  const declareChosen = async (): Promise<boolean> => {
    for (const key of columns) {
      const type = types[key] ?? "string";
      if (type === (current[key] ?? "string")) continue;
      const { error } = await client.raw.PUT("/v0/workspaces/{workspaceId}/fields/{fieldKey}", {
        params: { path: { workspaceId, fieldKey: key } },
        body: { type },
      });
      if (error) {
        setRefused({ key, error });
        return false;
      }
    }
    return true;
  };
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!file) return;
    setRefused(undefined);
    setDeclaring(true);
    const declared = await declareChosen().finally(() => setDeclaring(false));
    if (!declared) return;
    upload.mutate({
      // The file's name goes with it (the body is its bytes alone), so the job is known by it.
      params: {
        path: { workspaceId },
        query: { name: file.name.slice(0, 255), ...(audienceId ? { audienceId } : {}) },
      },
      // The file goes as it is, as text/csv: the browser reads it from disk as it sends it.
      body: file as unknown as string,
      bodySerializer: (body: unknown) => body as File,
      headers: { "content-type": "text/csv" },
    });
  };
  return (
    <form className="panel stack" onSubmit={submit} aria-label="Upload a CSV file">
      <p className="muted">
        A CSV file with a header row naming <code>email</code> or <code>id</code> (or both), and any of{" "}
        <code>alternativeEmails</code>, <code>firstName</code>, <code>lastName</code>, <code>role</code>,{" "}
        <code>company</code> and custom fields. Members are matched by id, else by e-mail, and merged.
      </p>
      <div className="inline-form">
        <label htmlFor="import-file">CSV file</label>
        <input
          id="import-file"
          type="file"
          accept=".csv,text/csv"
          aria-describedby="import-upload-error"
          onChange={(event) => {
            const chosenFile = event.target.files?.[0];
            setFile(chosenFile);
            setChosen({});
            setRefused(undefined);
            upload.reset();
            void (chosenFile ? customColumnsOf(chosenFile) : Promise.resolve([])).then(setColumns);
          }}
        />
        <label htmlFor="import-audience">Add everyone to</label>
        <select id="import-audience" value={audienceId} onChange={(event) => setAudienceId(event.target.value)}>
          <option value="">no audience</option>
          {audiences.data?.results.map((audience) => (
            <option key={audience.id} value={audience.id}>
              {audience.name}
            </option>
          ))}
        </select>
        <button type="submit" disabled={!file || upload.isPending || declaring}>
          {upload.isPending ? "Uploading…" : declaring ? "Typing fields…" : "Import"}
        </button>
      </div>
      <ColumnTypes
        columns={columns}
        types={types}
        onChange={(key, type) => {
          setChosen((was) => ({ ...was, [key]: type }));
          setRefused(undefined);
        }}
      />
      <ErrorNote id="import-upload-error" error={upload.error ?? refused?.error} />
      {refused && <FieldMisfits error={refused.error} fieldKey={refused.key} />}
    </form>
  );
}
