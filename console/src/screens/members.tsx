import { useState } from "react";
import { useApi } from "../api.tsx";
import { ErrorNote } from "../ui/error-note.tsx";
import { FIRST_PAGE, Pager } from "../ui/pager.tsx";
import { MemberDetail } from "./member-detail.tsx";
import "./tools.css";

const PAGE_SIZE = 25;

/** The workspace's members a page at a time (keyset paging), searched by e-mail, name, role or company; one opened to edit. */
export function MembersScreen() {
  const { $api, workspaceId } = useApi();
  const [search, setSearch] = useState("");
  const [page, setPage] = useState(FIRST_PAGE);
  const [openId, setOpenId] = useState<string | undefined>();
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
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">E-mail</th>
                  <th scope="col">Name</th>
                  <th scope="col">Company</th>
                  <th scope="col">Added</th>
                </tr>
              </thead>
              <tbody>
                {members?.results.map((member) => (
                  <tr key={member.id} className={member.id === openId ? "selected" : ""}>
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
                    <td>{[member.fields.firstName, member.fields.lastName].filter(Boolean).join(" ")}</td>
                    <td>{member.fields.company}</td>
                    <td>{new Date(member.createdAt).toLocaleDateString()}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
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
