import { type FormEvent, useState } from "react";
import { Link } from "wouter";
import { useApi } from "../api.tsx";
import { DataTable } from "../ui/data-table.tsx";
import { ErrorNote } from "../ui/error-note.tsx";
import { FIRST_PAGE, Pager } from "../ui/pager.tsx";
import { SizeSparkline } from "../ui/size-sparkline.tsx";
import { MergeAudiences } from "./audience-merge.tsx";

const PAGE_SIZE = 25;

/** Every audience of the workspace: exact size, rule or manual, size over 30 days; search, create, rename, archive. */
export function AudiencesScreen() {
  const { $api, workspaceId } = useApi();
  const [search, setSearch] = useState("");
  const [includeArchived, setIncludeArchived] = useState(false);
  const [page, setPage] = useState(FIRST_PAGE);
  const list = $api.useQuery("get", "/v0/workspaces/{workspaceId}/audiences", {
    params: {
      path: { workspaceId },
      query: {
        include: "stats",
        limit: PAGE_SIZE,
        ...(page.after ? { after: page.after } : {}),
        ...(search.trim() ? { search: search.trim() } : {}),
        ...(includeArchived ? { includeArchived: true } : {}),
      },
    },
  });

  return (
    <>
      <h1>Audiences</h1>
      <CreateAudience />
      <MergeAudiences />
      <div className="row">
        <label htmlFor="audience-search">Search</label>
        <input
          id="audience-search"
          type="search"
          value={search}
          placeholder="Name contains…"
          onChange={(event) => {
            setSearch(event.target.value);
            setPage(FIRST_PAGE);
          }}
        />
        <label className="row">
          <input
            type="checkbox"
            checked={includeArchived}
            onChange={(event) => {
              setIncludeArchived(event.target.checked);
              setPage(FIRST_PAGE);
            }}
          />
          Show archived
        </label>
      </div>
      <ErrorNote error={list.error} />
      <DataTable
        label="Audiences"
        columns={[
          "Name",
          { label: "Members", numeric: true },
          "Kind",
          "Last 30 days",
          "Created",
          { label: "Actions", hidden: true },
        ]}
      >
        {list.data?.results.map((audience) => (
          <AudienceRow key={audience.id} audience={audience} />
        ))}
      </DataTable>
      {list.isPending && <p className="muted">Loading…</p>}
      {list.data && list.data.results.length === 0 && (
        <p className="muted">No audiences{search ? " match" : " yet"}.</p>
      )}
      <Pager
        label="Audience pages"
        page={page}
        hasNextPage={list.data?.pageInfo?.hasNextPage ?? false}
        endCursor={list.data?.pageInfo?.endCursor}
        onChange={setPage}
      />
    </>
  );
}

type Row = {
  id: string;
  name: string;
  createdAt: string;
  isArchived: boolean;
  memberCount?: number;
  hasRule?: boolean;
};

function AudienceRow({ audience }: { audience: Row }) {
  const { $api, workspaceId } = useApi();
  const [renaming, setRenaming] = useState(false);
  const [name, setName] = useState(audience.name);
  const path = { params: { path: { workspaceId, audienceId: audience.id } } };
  const rename = $api.useMutation("patch", "/v0/workspaces/{workspaceId}/audiences/{audienceId}", {
    onSuccess: () => setRenaming(false),
  });
  const archive = $api.useMutation("delete", "/v0/workspaces/{workspaceId}/audiences/{audienceId}");
  const restore = $api.useMutation("post", "/v0/workspaces/{workspaceId}/audiences/{audienceId}/restore");
  const submit = (event: FormEvent) => {
    event.preventDefault();
    rename.mutate({ ...path, body: { name } });
  };
  const errorId = `audience-error-${audience.id}`;
  return (
    <tr className={audience.isArchived ? "archived" : ""}>
      <td>
        {renaming ? (
          <form onSubmit={submit} className="row">
            <input
              aria-label={`New name for ${audience.name}`}
              value={name}
              onChange={(event) => setName(event.target.value)}
              aria-describedby={errorId}
              // biome-ignore lint/a11y/noAutofocus: the field a person just asked to edit
              autoFocus
            />
            <button type="submit" disabled={rename.isPending || name.trim() === "" || name.trim() === audience.name}>
              Save
            </button>
            <button type="button" className="quiet" onClick={() => setRenaming(false)}>
              Cancel
            </button>
          </form>
        ) : (
          <Link href={`/audiences/${audience.id}`}>{audience.name}</Link>
        )}
        {audience.isArchived && <span className="badge">archived</span>}
        <ErrorNote id={errorId} error={rename.error ?? archive.error ?? restore.error} />
      </td>
      <td className="num" data-label="Members">
        {audience.memberCount?.toLocaleString()}
      </td>
      <td data-label="Kind">{audience.hasRule ? "rule" : "manual"}</td>
      <td data-label="Last 30 days">
        <SizeSparkline audienceId={audience.id} name={audience.name} />
      </td>
      <td data-label="Created">{new Date(audience.createdAt).toLocaleDateString()}</td>
      <td>
        <div className="row">
          {!renaming && !audience.isArchived && (
            <button type="button" className="quiet" onClick={() => setRenaming(true)}>
              Rename<span className="visually-hidden"> {audience.name}</span>
            </button>
          )}
          {audience.isArchived ? (
            <button type="button" className="quiet" disabled={restore.isPending} onClick={() => restore.mutate(path)}>
              Restore<span className="visually-hidden"> {audience.name}</span>
            </button>
          ) : (
            <button type="button" className="quiet" disabled={archive.isPending} onClick={() => archive.mutate(path)}>
              Archive<span className="visually-hidden"> {audience.name}</span>
            </button>
          )}
        </div>
      </td>
    </tr>
  );
}

function CreateAudience() {
  const { $api, inWorkspace } = useApi();
  const [name, setName] = useState("");
  const create = $api.useMutation("post", "/v0/workspaces/{workspaceId}/audiences", {
    onSuccess: () => setName(""),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate({ ...inWorkspace, body: { name } });
  };
  return (
    <form className="row" onSubmit={submit}>
      <label htmlFor="new-audience">New audience</label>
      <input
        id="new-audience"
        value={name}
        onChange={(event) => {
          setName(event.target.value);
          create.reset();
        }}
        aria-describedby="new-audience-error"
        placeholder="Name"
      />
      <button type="submit" disabled={create.isPending || name.trim() === ""}>
        Create
      </button>
      <ErrorNote id="new-audience-error" error={create.error} />
    </form>
  );
}
