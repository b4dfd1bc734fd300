import { keepPreviousData } from "@tanstack/react-query";
import { useState } from "react";
import { useApi } from "../api.tsx";
import { DataTable } from "../ui/data-table.tsx";
import { ErrorNote } from "../ui/error-note.tsx";
import { FIRST_PAGE, Pager } from "../ui/pager.tsx";
import { dayLabel, endOfDay } from "./audience-history.tsx";

const PAGE_SIZE = 20;

/**
 * An audience's members, a page at a time (an audience of a million members is never loaded
 * whole), each one can be taken out by hand: removed, or in an audience with a rule excluded (it
 * stays out while the rule matches it). `leave` is undefined when the audience cannot change.
 * With `asOf` (a day), a past view: the members at the end of that day, from the membership
 * record, which nothing on it changes (nor can it be searched).
 */
export function AudienceMembers({
  audienceId,
  onExplain,
  leave: canLeave,
  asOf,
}: {
  audienceId: string;
  onExplain(id: string): void;
  leave: "Remove" | "Exclude" | undefined;
  asOf?: string | undefined;
}) {
  const { $api, workspaceId } = useApi();
  const [typed, setSearch] = useState("");
  const [page, setPage] = useState(FIRST_PAGE);
  const [pageOf, setPageOf] = useState(asOf);
  // A page's cursor belongs to its instant: another day starts at the first page.
  if (pageOf !== asOf) {
    setPageOf(asOf);
    setPage(FIRST_PAGE);
  }
  const search = asOf ? "" : typed;
  const leave = asOf ? undefined : canLeave;
  const members = $api.useQuery(
    "get",
    "/v0/workspaces/{workspaceId}/audiences/{audienceId}/members",
    {
      params: {
        path: { workspaceId, audienceId },
        query: {
          limit: PAGE_SIZE,
          ...(page.after ? { after: page.after } : {}),
          ...(search.trim() ? { search: search.trim() } : {}),
          ...(asOf ? { asOf: endOfDay(asOf) } : {}),
        },
      },
    },
    { placeholderData: keepPreviousData },
  );
  const take = $api.useMutation("delete", "/v0/workspaces/{workspaceId}/audiences/{audienceId}/members");
  return (
    <section className="panel" aria-labelledby="members-heading">
      <h2 id="members-heading">{asOf ? `Members on ${dayLabel(asOf)}` : "Members"}</h2>
      {asOf ? (
        <p className="panel past-view" role="note">
          <strong>A past view.</strong> These are the members at the end of {dayLabel(asOf)} (UTC)
          {members.data ? `: ${members.data.totalCount.toLocaleString()} of them` : ""}. Their data are shown as they
          are now; nothing here can be changed.
        </p>
      ) : (
        <div className="row">
          <label htmlFor="audience-member-search">Search</label>
          <input
            id="audience-member-search"
            type="search"
            placeholder="Email or name…"
            value={search}
            onChange={(event) => {
              setSearch(event.target.value);
              setPage(FIRST_PAGE);
            }}
          />
        </div>
      )}
      <ErrorNote error={members.error} />
      <ErrorNote error={take.error} />
      {(members.data?.results.length ?? 0) > 0 && (
        <DataTable labelledBy="members-heading" columns={["Email", "Name", { label: "Actions", hidden: true }]}>
          {members.data?.results.map((member) => (
            <tr key={member.id}>
              <td>
                {member.email ?? <span className="muted">{member.id}</span>}
                {member.deletedAt && <span className="muted"> (deleted since)</span>}
              </td>
              <td data-label="Name">{[member.fields.firstName, member.fields.lastName].filter(Boolean).join(" ")}</td>
              <td>
                <div className="row tight">
                  <button type="button" className="quiet" onClick={() => onExplain(member.id)}>
                    Why?<span className="visually-hidden"> {member.email ?? member.id}</span>
                  </button>
                  {leave && (
                    <button
                      type="button"
                      className="quiet"
                      disabled={take.isPending}
                      onClick={() =>
                        take.mutate({
                          params: { path: { workspaceId, audienceId } },
                          body: { memberIds: [member.id] },
                        })
                      }
                    >
                      {leave}
                      <span className="visually-hidden"> {member.email ?? member.id}</span>
                    </button>
                  )}
                </div>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      {members.data?.results.length === 0 && <p className="muted">No members{search ? " match" : ""}.</p>}
      <Pager
        label="Member pages"
        page={page}
        hasNextPage={members.data?.pageInfo.hasNextPage ?? false}
        endCursor={members.data?.pageInfo.endCursor}
        onChange={setPage}
      />
    </section>
  );
}
