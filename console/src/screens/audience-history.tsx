import { keepPreviousData } from "@tanstack/react-query";
import { useState } from "react";
import { problemOf, useApi } from "../api.tsx";
import { DataTable } from "../ui/data-table.tsx";
import { ErrorNote } from "../ui/error-note.tsx";
import { FIRST_PAGE, Pager } from "../ui/pager.tsx";
import "./audience-history.css";

const DAYS = 30;
const DAY_MS = 86_400_000;
const PAGE_SIZE = 20;

/** A day (YYYY-MM-DD, UTC, as a date input writes it) as people read it. */
export const dayLabel = (day: string) =>
  new Date(`${day}T00:00:00Z`).toLocaleDateString("en-GB", {
    timeZone: "UTC",
    day: "numeric",
    month: "short",
    year: "numeric",
  });

/** The last instant of a day (UTC): a past view of that day lists the members at its end. */
export const endOfDay = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) + DAY_MS - 1).toISOString();

/** The date input that turns the audience's members into a past view, and back to now. */
export function AsOfPicker({ day, onChange }: { day: string | undefined; onChange(day: string | undefined): void }) {
  const today = new Date().toISOString().slice(0, 10);
  return (
    <div className="row">
      <label htmlFor="members-as-of">View the members as of</label>
      <input
        id="members-as-of"
        type="date"
        max={today}
        value={day ?? ""}
        aria-describedby="members-as-of-help"
        onChange={(event) => onChange(event.target.value || undefined)}
      />
      {day && (
        <button type="button" className="quiet" onClick={() => onChange(undefined)}>
          Back to now
        </button>
      )}
      <span id="members-as-of-help" className="muted">
        the end of a day (UTC), within the history the service keeps
      </span>
    </div>
  );
}

/**
 * The audience's size at the end of each of the last 30 days, one bar a day; choosing a day
 * lists who entered and who left it (listAudienceChanges over that day).
 */
export function SizeByDay({ audienceId, name }: { audienceId: string; name: string }) {
  const { $api, workspaceId } = useApi();
  const [day, setDay] = useState<string | undefined>();
  // Rounded to the hour, so that the query's key (and the cache) stays the same between renders.
  const from = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 - DAYS * DAY_MS).toISOString();
  const history = $api.useQuery("get", "/v0/workspaces/{workspaceId}/audiences/{audienceId}/history", {
    params: { path: { workspaceId, audienceId }, query: { interval: "day", from } },
  });
  const rows = history.data?.results ?? [];
  const max = Math.max(1, ...rows.map((row) => row.memberCount));
  return (
    <section className="panel" aria-labelledby="size-days-heading">
      <h2 id="size-days-heading">Size, day by day</h2>
      <ErrorNote error={history.error} />
      {rows.length === 0 && history.data && <p className="muted">No history yet.</p>}
      {rows.length > 0 && (
        <>
          <p className="muted">Choose a day to see who entered and who left {name} that day.</p>
          <fieldset className="size-days-set">
            <legend className="visually-hidden">Size of {name}, day by day</legend>
            <div className="size-days">
              {rows.map((row) => {
                const rowDay = row.at.slice(0, 10);
                return (
                  <button
                    key={row.at}
                    type="button"
                    className="size-day"
                    aria-pressed={day === rowDay}
                    aria-label={`${dayLabel(rowDay)}: ${row.memberCount.toLocaleString()} members, ${row.entered.toLocaleString()} entered, ${row.left.toLocaleString()} left`}
                    title={`${dayLabel(rowDay)}: ${row.memberCount.toLocaleString()} members (+${row.entered} −${row.left})`}
                    onClick={() => setDay(day === rowDay ? undefined : rowDay)}
                  >
                    <span style={{ height: `${Math.max(2, Math.round((row.memberCount / max) * 56))}px` }} />
                  </button>
                );
              })}
            </div>
          </fieldset>
        </>
      )}
      {day && <DayChanges key={day} audienceId={audienceId} day={day} />}
    </section>
  );
}

/** How a member entered or left, as the changes' `reason` says it. */
const REASONS: Record<string, string> = {
  manual: "by hand",
  rule: "the rule",
  member_changed: "the member's data changed",
  member_deleted: "the member was deleted",
  merge: "a merge",
  time: "the clock",
  dependency: "another audience",
  snapshot: "a snapshot",
  activity: "an activity",
};

/** Who entered and who left the audience on one day (UTC), a page at a time. */
function DayChanges({ audienceId, day }: { audienceId: string; day: string }) {
  const { $api, workspaceId } = useApi();
  const [page, setPage] = useState(FIRST_PAGE);
  // The day's start, or, on the day the history began (the workspace's creation), that instant:
  // the service refuses a span that starts before it, naming it (oldestAvailable).
  const [from, setFrom] = useState(`${day}T00:00:00.000Z`);
  // Today's span ends now: the service takes a later instant for now.
  const to = new Date(Date.parse(`${day}T00:00:00Z`) + DAY_MS - 1).toISOString();
  const changes = $api.useQuery(
    "get",
    "/v0/workspaces/{workspaceId}/audiences/{audienceId}/changes",
    {
      params: {
        path: { workspaceId, audienceId },
        query: page.after ? { limit: PAGE_SIZE, after: page.after } : { from, to, limit: PAGE_SIZE },
      },
    },
    { placeholderData: keepPreviousData },
  );
  const oldest = problemOf(changes.error)?.oldestAvailable;
  const began = typeof oldest === "string" && oldest > from && oldest <= to ? oldest : undefined;
  if (began) setFrom(began);
  const counts = changes.data?.counts;
  return (
    <section className="day-changes" aria-labelledby="day-changes-heading">
      <h3 id="day-changes-heading">Who came and went on {dayLabel(day)}</h3>
      <ErrorNote error={changes.error} />
      {counts && (
        <p>
          <span className="good">{counts.entered.toLocaleString()} entered</span>,{" "}
          <span className="bad">{counts.left.toLocaleString()} left</span> (net, by the end of the day
          {from.startsWith(day) && !from.endsWith("T00:00:00.000Z")
            ? `, since the history began at ${from.slice(11, 19)} UTC`
            : ""}
          )
        </p>
      )}
      {(changes.data?.results.length ?? 0) > 0 && (
        <DataTable labelledBy="day-changes-heading" columns={["Member", "Change", "How", "When (UTC)"]}>
          {changes.data?.results.map((change) => (
            <tr key={change.memberId}>
              <td>{change.memberId}</td>
              <td data-label="Change" className={change.change === "entered" ? "good" : "bad"}>
                {change.change}
              </td>
              <td data-label="How">{REASONS[change.reason] ?? change.reason}</td>
              <td data-label="When (UTC)">{change.at.slice(11, 19)}</td>
            </tr>
          ))}
        </DataTable>
      )}
      {changes.data?.results.length === 0 && <p className="muted">Nobody entered or left that day.</p>}
      <Pager
        label="Change pages"
        page={page}
        hasNextPage={changes.data?.pageInfo.hasNextPage ?? false}
        endCursor={changes.data?.pageInfo.endCursor}
        onChange={setPage}
      />
    </section>
  );
}
