import { useState } from "react";
import { useSearch } from "wouter";
import { useApi } from "../api.tsx";
import { AddToAudience } from "../ui/add-to-audience.tsx";
import { DataTable } from "../ui/data-table.tsx";
import { ErrorNote } from "../ui/error-note.tsx";
import { FIRST_PAGE, Pager } from "../ui/pager.tsx";
import { MemberDetail } from "./member-detail.tsx";
import "./tools.css";

const PAGE_SIZE = 25;

/**
 * The workspace's members a page at a time (keyset paging), searched by e-mail, name, role or
 * company; some selected to add to an audience or delete together; one opened to edit.
 */
export function MembersScreen() {
  const { $api, workspaceId } = useApi();
  const [search, setSearch] = useState("");
  const [page, setPage] = useState(FIRST_PAGE);
  // A link to one member (from the Fields screen's refused declaration) opens it.
  const linked = new URLSearchParams(useSearch()).get("member") ?? undefined;
  const [openId, setOpenId] = useState<string | undefined>(linked);
  // Selected members by id, with what names them, kept across pages and searches until acted on.
  const [selected, setSelected] = useState<ReadonlyMap<string, string>>(new Map());
  const term = search.trim();
  const list = $api.useQuery("get", "/v0/workspaces/{workspaceId}/members", {
    params: {
      path: { workspaceId },
      query: {
        limit: PAGE_SIZE,
        sortDirection: "DESC",
        ...(page.after ? { after: page.after } : {}),
        ...(term ? { search: term } : {}),
      },
    },
  });
  const members = list.data;
  const total = members?.totalCount;
  const onPage = members?.results ?? [];
  const allOnPage = onPage.length > 0 && onPage.every((member) => selected.has(member.id));
  const select = (entries: { id: string; email: string | null }[], on: boolean) =>
    setSelected((current) => {
      const next = new Map(current);
      for (const { id, email } of entries) {
        if (on) next.set(id, email ?? id);
        else next.delete(id);
      }
      return next;
    });

  return (
    <>
      <h1>Members</h1>
      <div className="columns">
        <section aria-labelledby="member-list-heading">
          <h2 id="member-list-heading" className="visually-hidden">
            Member list
          </h2>
          <div className="row">
            <label htmlFor="member-search">Search</label>
            <input
              id="member-search"
              type="search"
              value={search}
              placeholder="E-mail, name, role or company"
              aria-describedby="member-search-error"
              onChange={(event) => {
                setSearch(event.target.value);
                setPage(FIRST_PAGE);
              }}
            />
            {total !== undefined && (
              <span className="muted" aria-live="polite">
                {total.toLocaleString()} {total === 1 ? "member" : "members"}
                {term ? " match" : ""}
              </span>
            )}
          </div>
          <ErrorNote id="member-search-error" error={list.error} />
          {selected.size > 0 && (
            <SelectionBar
              selected={selected}
              onDone={() => setSelected(new Map())}
              onDeleted={(ids) => {
                if (openId && ids.includes(openId)) setOpenId(undefined);
              }}
            />
          )}
          <DataTable
            label="Members"
            columns={[
              {
                label: "Select",
                header: (
                  <input
                    type="checkbox"
                    aria-label="Select every member on this page"
                    checked={allOnPage}
                    disabled={onPage.length === 0}
                    onChange={(event) => select(onPage, event.target.checked)}
                  />
                ),
              },
              "E-mail",
              "Name",
              "Company",
              "Added",
            ]}
          >
            {members?.results.map((member) => (
              <tr key={member.id} className={member.id === openId ? "selected" : ""}>
                <td className="select">
                  <input
                    type="checkbox"
                    aria-label={`Select ${member.email ?? member.id}`}
                    checked={selected.has(member.id)}
                    onChange={(event) => select([member], event.target.checked)}
                  />
                </td>
                <td>
                  <button
                    type="button"
                    className="link"
                    aria-pressed={member.id === openId}
                    onClick={() => setOpenId(member.id)}
                  >
                    {member.email ?? member.id}
                  </button>
                </td>
                <td data-label="Name">{[member.fields.firstName, member.fields.lastName].filter(Boolean).join(" ")}</td>
                <td data-label="Company">{member.fields.company}</td>
                <td data-label="Added">{new Date(member.createdAt).toLocaleDateString()}</td>
              </tr>
            ))}
          </DataTable>
          {list.isPending && <p className="muted">Loading…</p>}
          {members && members.results.length === 0 && <p className="muted">No members{term ? " match" : " yet"}.</p>}
          <Pager
            label="Member pages"
            page={page}
            hasNextPage={members?.pageInfo.hasNextPage ?? false}
            endCursor={members?.pageInfo.endCursor}
            onChange={setPage}
          />
        </section>
        {openId ? (
          <MemberDetail key={openId} memberId={openId} onClose={() => setOpenId(undefined)} />
        ) : (
          <p className="muted">Choose a member to see its fields and audiences.</p>
        )}
      </div>
    </>
  );
}

/** What can be done to the selected members at once: add them to an audience, or delete them. */
function SelectionBar({
  selected,
  onDone,
  onDeleted,
}: {
  selected: ReadonlyMap<string, string>;
  onDone(): void;
  onDeleted(ids: string[]): void;
}) {
  const { $api, inWorkspace } = useApi();
  const [confirming, setConfirming] = useState(false);
  const ids = [...selected.keys()];
  const who =
    selected.size === 1 ? [...selected.values()].join("") : `${selected.size.toLocaleString()} selected members`;
  const remove = $api.useMutation("delete", "/v0/workspaces/{workspaceId}/members", {
    onSuccess: () => {
      onDeleted(ids);
      setConfirming(false);
      onDone();
    },
  });
  return (
    <section className="panel selection" aria-labelledby="selection-heading">
      <div className="row">
        <h2 id="selection-heading">{selected.size.toLocaleString()} selected</h2>
        <button type="button" className="quiet" onClick={onDone}>
          Clear the selection
        </button>
      </div>
      <AddToAudience memberIds={ids} label={who} idPrefix="selection" />
      <div className="row">
        {confirming ? (
          <>
            <span role="status">Delete {who} from the workspace and from every audience? This cannot be undone.</span>
            <button
              type="button"
              className="danger"
              disabled={remove.isPending}
              onClick={() => remove.mutate({ ...inWorkspace, body: { memberIds: ids } })}
            >
              Yes, delete
            </button>
            <button type="button" className="quiet" onClick={() => setConfirming(false)}>
              Keep them
            </button>
          </>
        ) : (
          <button type="button" className="quiet" onClick={() => setConfirming(true)}>
            Delete<span className="visually-hidden"> {who}</span>
          </button>
        )}
      </div>
      <ErrorNote error={remove.error} />
    </section>
  );
}
