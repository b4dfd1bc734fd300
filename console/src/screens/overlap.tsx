import { useState } from "react";
import { useApi } from "../api.tsx";
import { ErrorNote } from "../ui/error-note.tsx";
import { OverlapHeatmap } from "./overlap-heatmap.tsx";
import "./tools.css";

/** The contract's bounds of one overlap request. */
const MIN = 2;
const MAX = 20;

type Chosen = { id: string; name: string };

/** Overlap: choose 2 to 20 audiences, see how many members each pair shares, and all of them. */
export function OverlapScreen() {
  const { $api, workspaceId, inWorkspace } = useApi();
  const [search, setSearch] = useState("");
  const [chosen, setChosen] = useState<Chosen[]>([]);
  const [compared, setCompared] = useState<Chosen[]>([]);
  const term = search.trim();
  const list = $api.useQuery("get", "/v0/workspaces/{workspaceId}/audiences", {
    params: { path: { workspaceId }, query: { limit: 50, ...(term ? { search: term } : {}) } },
  });
  const overlap = $api.useMutation("post", "/v0/workspaces/{workspaceId}/audiences/overlap");
  const isChosen = (id: string) => chosen.some((audience) => audience.id === id);
  const toggle = (audience: Chosen, on: boolean) =>
    setChosen((current) => (on ? [...current, audience] : current.filter((a) => a.id !== audience.id)));
  const compare = () => {
    setCompared(chosen);
    overlap.mutate({ ...inWorkspace, body: { audienceIds: chosen.map((audience) => audience.id) } });
  };

  return (
    <>
      <h1>Overlap</h1>
      <fieldset>
        <legend>
          Audiences to compare ({MIN} to {MAX})
        </legend>
        <div className="row">
          <label htmlFor="overlap-search">Search</label>
          <input
            id="overlap-search"
            type="search"
            value={search}
            placeholder="Name contains…"
            onChange={(event) => setSearch(event.target.value)}
          />
        </div>
        <ErrorNote error={list.error} />
        <div className="choices">
          {list.data?.results.map((audience) => (
            <label key={audience.id}>
              <input
                type="checkbox"
                checked={isChosen(audience.id)}
                disabled={!isChosen(audience.id) && chosen.length >= MAX}
                onChange={(event) => toggle({ id: audience.id, name: audience.name }, event.target.checked)}
              />
              {audience.name}
            </label>
          ))}
          {list.data && list.data.results.length === 0 && (
            <p className="muted">No audiences{term ? " match" : " yet"}.</p>
          )}
        </div>
        <p className="muted" role="status">
          {chosen.length === 0
            ? "None chosen."
            : `Chosen (${chosen.length} of at most ${MAX}): ${chosen.map((audience) => audience.name).join(", ")}`}
        </p>
        <div className="row">
          <button
            type="button"
            disabled={chosen.length < MIN || overlap.isPending}
            aria-describedby="overlap-error"
            onClick={compare}
          >
            Compare
          </button>
          {chosen.length > 0 && (
            <button type="button" className="quiet" onClick={() => setChosen([])}>
              Clear
            </button>
          )}
          {chosen.length === 1 && <span className="muted">Choose one more.</span>}
        </div>
        <ErrorNote id="overlap-error" error={overlap.error} />
      </fieldset>
      {overlap.isPending && <p className="muted">Counting…</p>}
      {overlap.data && !overlap.isPending && <OverlapHeatmap audiences={compared} overlap={overlap.data} />}
    </>
  );
}
