import type { components } from "@audience-service/client";
import { keepPreviousData } from "@tanstack/react-query";
import { Link } from "wouter";
import { useApi } from "../api.tsx";
import { MemberName } from "../ui/member-name.tsx";
import type { Filter } from "./rule-state.ts";

type MemberSample = components["schemas"]["MemberSample"];

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
    {
      params: { path: { workspaceId, audienceId: props.audienceId }, query: { include: "member" } },
      body: props.body ?? { filter: null },
    },
    { enabled: props.body !== undefined && !props.unchanged, placeholderData: keepPreviousData, retry: false },
  );
  if (props.unchanged) return <p className="muted">The rule as saved.</p>;
  const result = dryRun.data;
  // An earlier draft's answer (kept while the next is asked) is not shown as this draft's.
  if (!result || dryRun.error || dryRun.isPlaceholderData || !props.body) {
    return <p className="muted">{props.body ? "Working out the change…" : ""}</p>;
  }
  return (
    <div className="panel" aria-live="polite">
      <p className="diff">
        If saved: <span className="good">+{result.entering.count.toLocaleString()} entering</span>,{" "}
        <span className="bad">−{result.leaving.count.toLocaleString()} leaving</span>, then{" "}
        {result.memberCount.toLocaleString()} {result.memberCount === 1 ? "member" : "members"}
        {props.total !== undefined && <span className="muted"> ({props.total.toLocaleString()} match the rule)</span>}.
      </p>
      <Sample label="Entering, for example" side={result.entering} audienceId={props.audienceId} draft={props.body} />
      <Sample label="Leaving, for example" side={result.leaving} audienceId={props.audienceId} draft={props.body} />
    </div>
  );
}

function Sample(props: { label: string; side: MemberSample; audienceId: string; draft: { filter: Filter | null } }) {
  const { label, side, audienceId } = props;
  if (side.sample.length === 0) return null;
  // Explained against the draft the sample came from, not the saved rule (which may not have it in).
  const draft = encodeURIComponent(JSON.stringify(props.draft.filter));
  // `members` answers include=member; an id without it is still a member, named by its id.
  const emails = new Map((side.members ?? []).map((m) => [m.id, m.email]));
  return (
    <p>
      <span className="muted">{label}: </span>
      {side.sample.map((id, i) => (
        <span key={id}>
          {i > 0 && ", "}
          <Link href={`/audiences/${audienceId}?member=${encodeURIComponent(id)}&draft=${draft}`}>
            <MemberName id={id} email={emails.get(id)} />
          </Link>
        </span>
      ))}
    </p>
  );
}
