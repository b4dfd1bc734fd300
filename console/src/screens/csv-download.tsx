import { useState } from "react";
import { problemText, useApi } from "../api.tsx";

/**
 * The audience's members as CSV, through the streaming export, with the bytes received so far
 * shown while it downloads; then saved as a file.
 */
export function CsvDownload({ audienceId, name }: { audienceId: string; name: string }) {
  const { client, workspaceId } = useApi();
  const [state, setState] = useState<{ bytes: number } | { error: string } | undefined>();
  const download = async () => {
    setState({ bytes: 0 });
    try {
      const { response, error } = await client.raw.GET("/v0/workspaces/{workspaceId}/audiences/{audienceId}/members", {
        params: { path: { workspaceId, audienceId } },
        headers: { accept: "text/csv" },
        parseAs: "stream",
      });
      if (!response.ok || !response.body) throw error ?? new Error(`The export failed (${response.status}).`);
      const reader = response.body.getReader();
      const parts: Uint8Array[] = [];
      let bytes = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parts.push(value);
        bytes += value.byteLength;
        setState({ bytes });
      }
      const url = URL.createObjectURL(new Blob(parts as BlobPart[], { type: "text/csv" }));
      const link = document.createElement("a");
      link.href = url;
      link.download = `${name.replace(/[^\w.-]+/g, "-")}.csv`;
      link.click();
      URL.revokeObjectURL(url);
      setState(undefined);
    } catch (error) {
      setState({ error: problemText(error) });
    }
  };
  const busy = state !== undefined && "bytes" in state;
  return (
    <span className="row">
      <button type="button" className="quiet" disabled={busy} onClick={() => void download()}>
        Download CSV
      </button>
      {busy && <output aria-live="polite">{(state.bytes / 1024).toFixed(0)} KB received…</output>}
      {state && "error" in state && (
        <span className="error" role="alert">
          {state.error}
        </span>
      )}
    </span>
  );
}
