import { type FormEvent, useState } from "react";
import { Link, useLocation, useSearch } from "wouter";
import { useApi } from "../api.tsx";
import { RuleBuilder } from "../rules/rule-builder.tsx";
import { ErrorNote } from "../ui/error-note.tsx";
import { SizeSparkline } from "../ui/size-sparkline.tsx";
import { AudienceMembers } from "./audience-members.tsx";
import { CsvDownload } from "./csv-download.tsx";
import { Explanation } from "./explanation.tsx";

/** One audience: its size, its members, its rule with live counts and dry run, why a member is in, snapshot, CSV. */
export function AudienceScreen({ id }: { id: string }) {
  const { $api, workspaceId } = useApi();
  const [, navigate] = useLocation();
  const member = new URLSearchParams(useSearch()).get("member") ?? undefined;
  const audience = $api.useQuery("get", "/v0/workspaces/{workspaceId}/audiences/{audienceId}", {
    params: { path: { workspaceId, audienceId: id }, query: { include: "stats" } },
  });
  const explain = (memberId: string | undefined) =>
    navigate(memberId ? `/audiences/${id}?member=${encodeURIComponent(memberId)}` : `/audiences/${id}`);

  if (audience.error) {
    return (
      <>
        <h1>Audience</h1>
        <ErrorNote error={audience.error} />
        <Link href="/">Back to the audiences</Link>
      </>
    );
  }
  const data = audience.data;
  return (
    <>
      <p>
        <Link href="/">← Audiences</Link>
      </p>
      <h1>{data?.name ?? "Audience"}</h1>
      {data && (
        <div className="row">
          <span className="diff">{data.memberCount?.toLocaleString()} members</span>
          <span className="badge">{data.hasRule ? "rule" : "manual"}</span>
          <SizeSparkline audienceId={id} name={data.name} />
          <CsvDownload audienceId={id} name={data.name} />
        </div>
      )}
      <div className="columns">
        <div>
          <RuleBuilder audienceId={id} />
          <Snapshot audienceId={id} />
        </div>
        <div>
          <ExplainForm key={member} member={member} onExplain={explain} />
          {member && <Explanation audienceId={id} memberId={member} />}
          <AudienceMembers audienceId={id} onExplain={explain} />
        </div>
      </div>
    </>
  );
}

function ExplainForm({ member, onExplain }: { member: string | undefined; onExplain(id: string | undefined): void }) {
  const [text, setText] = useState(member ?? "");
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onExplain(text.trim() || undefined);
  };
  return (
    <form className="row" onSubmit={submit}>
      <label htmlFor="explain-member">Why is a member in (or not)?</label>
      <input id="explain-member" value={text} placeholder="Member id" onChange={(e) => setText(e.target.value)} />
      <button type="submit" className="quiet">
        Explain
      </button>
    </form>
  );
}

function Snapshot({ audienceId }: { audienceId: string }) {
  const { $api, workspaceId } = useApi();
  const [name, setName] = useState("");
  const snapshot = $api.useMutation("post", "/v0/workspaces/{workspaceId}/audiences/{audienceId}/snapshot");
  const submit = (event: FormEvent) => {
    event.preventDefault();
    snapshot.mutate({ params: { path: { workspaceId, audienceId } }, body: { name } });
  };
  return (
    <section className="panel" aria-labelledby="snapshot-heading">
      <h2 id="snapshot-heading">Snapshot</h2>
      <p className="muted">A new manual audience with today's members, which rules no longer change.</p>
      <form className="row" onSubmit={submit}>
        <label htmlFor="snapshot-name">Name</label>
        <input
          id="snapshot-name"
          value={name}
          onChange={(event) => {
            setName(event.target.value);
            snapshot.reset();
          }}
          aria-describedby="snapshot-error"
        />
        <button type="submit" disabled={snapshot.isPending}>
          Take a snapshot
        </button>
      </form>
      <ErrorNote id="snapshot-error" error={snapshot.error} />
      {snapshot.data && (
        <p className="good" role="status">
          Snapshot made: <Link href={`/audiences/${snapshot.data.id}`}>{name}</Link>
        </p>
      )}
    </section>
  );
}
