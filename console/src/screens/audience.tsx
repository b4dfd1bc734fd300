import { type FormEvent, useState } from "react";
import { Link, useLocation, useSearch } from "wouter";
import { useApi } from "../api.tsx";
import { RuleBuilder } from "../rules/rule-builder.tsx";
import type { Filter } from "../rules/rule-state.ts";
import { ErrorNote } from "../ui/error-note.tsx";
import { SizeSparkline } from "../ui/size-sparkline.tsx";
import { AddPeople } from "./audience-add.tsx";
import { AsOfPicker, SizeByDay } from "./audience-history.tsx";
import { AudienceMembers } from "./audience-members.tsx";
import { CsvDownload } from "./csv-download.tsx";
import { Explanation } from "./explanation.tsx";

/** One audience: its size, its members, its rule with live counts and dry run, why a member is in, snapshot, CSV. */
export function AudienceScreen({ id }: { id: string }) {
  const { $api, workspaceId } = useApi();
  const [, navigate] = useLocation();
  const search = new URLSearchParams(useSearch());
  const member = search.get("member") ?? undefined;
  // A member sampled by the dry run comes with the draft it came from, to be explained against it.
  const draft = draftOf(search.get("draft"));
  // A past view of the members: a day (YYYY-MM-DD) whose end they are listed at, or now.
  const [asOf, setAsOf] = useState<string | undefined>();
  const audience = $api.useQuery("get", "/v0/workspaces/{workspaceId}/audiences/{audienceId}", {
    params: { path: { workspaceId, audienceId: id }, query: { include: "stats" } },
  });
  // undefined until the audience is read: nothing editable shows before it is known.
  const isArchived = audience.data?.isArchived;
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
      {isArchived && data && <ArchivedNote audienceId={id} name={data.name} />}
      {data && <SizeByDay audienceId={id} name={data.name} />}
      <div className="columns">
        <div>
          {isArchived === undefined ? null : isArchived ? (
            <SavedRule audienceId={id} />
          ) : (
            <RuleBuilder audienceId={id} />
          )}
          {isArchived === false && <Snapshot audienceId={id} />}
        </div>
        <div>
          <ExplainForm key={member} member={member} onExplain={explain} />
          {member && <Explanation audienceId={id} member={member} draft={draft} />}
          {data && isArchived === false && <AddPeople audienceId={id} name={data.name} />}
          <AsOfPicker day={asOf} onChange={setAsOf} />
          <AudienceMembers
            audienceId={id}
            asOf={asOf}
            onExplain={explain}
            leave={data && isArchived === false ? (data.hasRule ? "Exclude" : "Remove") : undefined}
          />
        </div>
      </div>
    </>
  );
}

/** An archived audience is read-only: nothing on its screen changes it until it is restored. */
function ArchivedNote({ audienceId, name }: { audienceId: string; name: string }) {
  const { $api, workspaceId } = useApi();
  const restore = $api.useMutation("post", "/v0/workspaces/{workspaceId}/audiences/{audienceId}/restore");
  return (
    <div className="panel notice" role="note">
      <p>
        <strong>{name} is archived.</strong> Its members and rule are kept as they were and can be read, but not
        changed, until it is restored.
      </p>
      <button
        type="button"
        disabled={restore.isPending}
        onClick={() => restore.mutate({ params: { path: { workspaceId, audienceId } } })}
      >
        Restore<span className="visually-hidden"> {name}</span>
      </button>
      <ErrorNote error={restore.error} />
    </div>
  );
}

/** The saved rule, shown and not editable (an archived audience's). */
function SavedRule({ audienceId }: { audienceId: string }) {
  const { $api, workspaceId } = useApi();
  const saved = $api.useQuery("get", "/v0/workspaces/{workspaceId}/audiences/{audienceId}/filter", {
    params: { path: { workspaceId, audienceId } },
  });
  return (
    <section aria-labelledby="rule-heading" className="panel">
      <h2 id="rule-heading">Rule</h2>
      <ErrorNote error={saved.error} />
      {saved.data &&
        (saved.data.filter === null ? (
          <p className="muted">No rule: the audience has members by hand only.</p>
        ) : (
          <pre className="rule-json">{JSON.stringify(saved.data.filter, null, 2)}</pre>
        ))}
    </section>
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
      <input
        id="explain-member"
        value={text}
        placeholder="E-mail address or member id"
        onChange={(e) => setText(e.target.value)}
      />
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
        <button type="submit" disabled={snapshot.isPending || name.trim() === ""}>
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

/** The draft rule a link carries (`draft=` JSON of a filter or null); undefined when none or unreadable. */
function draftOf(text: string | null): { filter: Filter | null } | undefined {
  if (text === null) return undefined;
  try {
    return { filter: JSON.parse(text) as Filter | null };
  } catch {
    return undefined;
  }
}
