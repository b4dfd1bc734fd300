import { useState } from "react";
import { useApi } from "../api.tsx";
import { ErrorNote } from "../ui/error-note.tsx";
import { FIRST_PAGE, type PageCursor, Pager } from "../ui/pager.tsx";

/** Activities per page of the timeline. */
const PAGE_SIZE = 20;

/** What a member did, newest first, a page at a time (listMemberActivities' keyset pages). */
export function MemberActivities({ memberId }: { memberId: string }) {
  const { $api, workspaceId } = useApi();
  const [page, setPage] = useState<PageCursor>(FIRST_PAGE);
  const activities = $api.useQuery("get", "/v0/workspaces/{workspaceId}/members/{memberId}/activities", {
    params: {
      path: { workspaceId, memberId },
      query: { limit: PAGE_SIZE, ...(page.after === undefined ? {} : { after: page.after }) },
    },
  });
  const results = activities.data?.results ?? [];
  return (
    <>
      <h3 id="activities-heading">Activities</h3>
      <ErrorNote error={activities.error} />
      {activities.data && results.length === 0 && page.previous.length === 0 && (
        <p className="muted">No activity recorded.</p>
      )}
      {results.length > 0 && (
        <table aria-labelledby="activities-heading">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Type</th>
              <th scope="col">Properties</th>
            </tr>
          </thead>
          <tbody>
            {results.map((activity, index) => (
              <tr key={`${activity.occurredAt}-${activity.id ?? index}`}>
                <td>
                  <time dateTime={activity.occurredAt}>{new Date(activity.occurredAt).toLocaleString()}</time>
                </td>
                <td>
                  <code>{activity.type}</code>
                </td>
                <td>
                  {Object.entries(activity.properties).map(([key, value]) => (
                    <span key={key} className="badge">
                      {key}: {String(value)}
                    </span>
                  ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {activities.data && (activities.data.pageInfo.hasNextPage || page.previous.length > 0) && (
        <Pager
          page={page}
          hasNextPage={activities.data.pageInfo.hasNextPage}
          endCursor={activities.data.pageInfo.endCursor}
          onChange={setPage}
          label="Activity pages"
        />
      )}
    </>
  );
}
