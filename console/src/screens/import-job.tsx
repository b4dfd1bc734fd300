import type { components } from "@audience-service/client";
import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { useApi } from "../api.tsx";
import { ErrorNote } from "../ui/error-note.tsx";

type Status = components["schemas"]["Import"]["status"];

/** How often a job that has not ended is looked at again. */
const POLL_MS = 500;

export function isEnded(status: Status): boolean {
  return status === "succeeded" || status === "failed" || status === "cancelled";
}

/**
 * The data rows of a CSV file, for the progress bar's end: its line breaks, less the header's
 * (a quoted value with a line break makes it an estimate; the bar fills when the job ends).
 * Read in chunks, so a large file is never held whole.
 */
export async function countRows(file: File): Promise<number> {
  let breaks = 0;
  let last = 10;
  const reader = file.stream().getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    for (const byte of value) if (byte === 10) breaks++;
    last = value.at(-1) ?? last;
  }
  const lines = breaks + (last === 10 ? 0 : 1);
  return Math.max(0, lines - 1);
}

/** The rows of the uploaded file once counted (undefined until then, or for a job opened from the list). */
function useRowCount(file: File | undefined): number | undefined {
  const [rows, setRows] = useState<number>();
  useEffect(() => {
    if (!file) return;
    let current = true;
    countRows(file).then(
      (count) => current && setRows(count),
      () => undefined,
    );
    return () => {
      current = false;
    };
  }, [file]);
  return rows;
}

/** One import job followed until it ends: a progress bar, its counts, the rejected rows with their lines, Cancel. */
export function ImportJob({ importId, file }: { importId: string; file?: File | undefined }) {
  const { $api, workspaceId } = useApi();
  const queryClient = useQueryClient();
  const expectedRows = useRowCount(file);
  const path = { params: { path: { workspaceId, importId } } };
  const job = $api.useQuery("get", "/v0/workspaces/{workspaceId}/imports/{importId}", path, {
    refetchInterval: (query) => (query.state.data && isEnded(query.state.data.status) ? false : POLL_MS),
    staleTime: 0,
  });
  const cancel = $api.useMutation("delete", "/v0/workspaces/{workspaceId}/imports/{importId}", {
    onSuccess: () => queryClient.invalidateQueries(),
  });
  const status = job.data?.status;
  const ended = status !== undefined && isEnded(status);
  useEffect(() => {
    // The list of imports (and every screen of members) shows the job's end without waiting for the feed.
    if (ended) void queryClient.invalidateQueries();
  }, [ended, queryClient]);

  const data = job.data;
  // A job that succeeded read every row; one that stopped shows how far it got (of the estimate).
  const done = status === "succeeded";
  const total = done && data ? Math.max(data.rowsRead, 1) : Math.max(expectedRows ?? 0, data?.rowsRead ?? 0);
  const max = total || (ended ? 1 : undefined);
  return (
    <section className="panel" aria-labelledby="import-job-heading">
      <h2 id="import-job-heading">
        Import of {data?.name ?? file?.name ?? importId}
        {(data?.name ?? file?.name) && <small className="muted"> ({importId})</small>}
      </h2>
      <ErrorNote error={job.error} />
      {data && (
        <>
          <p>
            Status: <strong className={`status-${data.status}`}>{data.status}</strong>
            {data.failureReason && <span className="bad"> — {data.failureReason}</span>}
          </p>
          <div className="inline-form">
            <progress
              aria-label="Import progress"
              max={max}
              value={max === undefined ? undefined : done ? max : data.rowsRead}
            />
            <span aria-live="polite">
              {data.rowsRead.toLocaleString()}
              {!ended && expectedRows ? ` of about ${expectedRows.toLocaleString()}` : ""} rows read
            </span>
            {!ended && (
              <button type="button" className="quiet" disabled={cancel.isPending} onClick={() => cancel.mutate(path)}>
                Cancel import
              </button>
            )}
          </div>
          <ErrorNote error={cancel.error} />
          <dl className="counts">
            <Count label="Created" value={data.created} />
            <Count label="Merged" value={data.merged} />
            <Count label="Unchanged" value={data.unchanged} />
            <Count label="Rejected" value={data.rejected} />
            <Count label="Size (bytes)" value={data.bytes} />
          </dl>
          {data.errors.length > 0 && <RowErrors errors={data.errors} rejected={data.rejected} />}
        </>
      )}
    </section>
  );
}

function Count({ label, value }: { label: string; value: number }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd>{value.toLocaleString()}</dd>
    </div>
  );
}

function RowErrors({ errors, rejected }: { errors: { line: number; message: string }[]; rejected: number }) {
  return (
    <>
      <h3 id="import-errors-heading">Rejected rows</h3>
      {rejected > errors.length && (
        <p className="muted">
          The first {errors.length.toLocaleString()} of {rejected.toLocaleString()} rejected rows.
        </p>
      )}
      <div className="table-wrap">
        <table aria-labelledby="import-errors-heading" className="compact">
          <thead>
            <tr>
              <th scope="col" className="num">
                Line
              </th>
              <th scope="col">Reason</th>
            </tr>
          </thead>
          <tbody>
            {errors.map((error) => (
              <tr key={`${error.line}:${error.message}`}>
                <td className="num">{error.line}</td>
                <td>{error.message}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
