import { keepPreviousData } from "@tanstack/react-query";
import { Link } from "wouter";
import { useApi } from "../api.tsx";
import type { Filter } from "./rule-state.ts";

/**
 * What saving the rule would do, before saving: the members who would enter and leave (+N/−M,
 * with the first few of each) and the size after. The same computation as saving, without the write.
 */
export function DryRun(props: {
  audienceId: string;
  body: { filter: Filter | null } | undefined;
  total: number | undefined;
  unchanged: boolean;
}) {
  const { $api, workspaceId } = useApi();
  const dryRun = $api.useQuery(
    "post",
    "/v0/workspaces/{workspaceId}/audiences/{audienceId}/filter/preview",
    { params: { path: { workspaceId, audienceId: props.audienceId } }, body: props.body ?? { filter: null } },
    { enabled: props.body !== undefined && !props.unchanged, placeholderData: keepPreviousData, retry: false },
  );
  if (props.unchanged) return <p className="muted">The rule as saved.</p>;
  const result = dryRun.data;
  if (!result || dryRun.error) return <p className="muted">{props.body ? "Working out the change…" : ""}</p>;
  return (
    <div className="panel" aria-live="polite">
      <p className="diff">
        If saved: <span className="good">+{result.entering.count.toLocaleString()} entering</span>,{" "}
        <span className="bad">−{result.leaving.count.toLocaleString()} leaving</span>, then{" "}
        {result.memberCount.toLocaleString()} {result.memberCount === 1 ? "member" : "members"}
        {props.total !== undefined && <span className="muted"> ({props.total.toLocaleString()} match the rule)</span>}.
      </p>
      <Sample label="Entering, for example" ids={result.entering.sample} audienceId={props.audienceId} />
      <Sample label="Leaving, for example" ids={result.leaving.sample} audienceId={props.audienceId} />
    </div>
  );
}

function Sample({ label, ids, audienceId }: { label: string; ids: string[]; audienceId: string }) {
  if (ids.length === 0) return null;
  return (
    <p>
      <span className="muted">{label}: </span>
      {ids.map((id, i) => (
        <span key={id}>
          {i > 0 && ", "}
          <Link href={`/audiences/${audienceId}?member=${encodeURIComponent(id)}`}>{id}</Link>
        </span>
      ))}
    </p>
  );
}
