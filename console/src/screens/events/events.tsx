import type { Event, EventType } from "@audience-service/client";
import { useState } from "react";
import { Link } from "wouter";
import { useApi } from "../../api.tsx";
import { useFeedFromNow } from "../../feed-refresh.ts";
import { DataTable } from "../../ui/data-table.tsx";
import { ErrorNote } from "../../ui/error-note.tsx";
import { useMemberEmails } from "../member-lookup.ts";
import { audienceOf, eventSummary, membersNamedBy } from "./event-summary.ts";
import { EVENT_TYPES } from "./event-types.ts";
import "../tools.css";

/** The most events kept on screen: older ones drop off the end. */
const MAX_ROWS = 200;
const POLL_MS = 1_000;

/**
 * The last MAX_ROWS events, newest first: the recent history the feed keeps, then each new one
 * as it happens.
 */
function useTail(): { events: Event[]; since: Date | undefined; error: unknown } {
  const [events, setEvents] = useState<Event[]>([]);
  const [since, setSince] = useState<Date>();
  const [error, setError] = useState<unknown>();
  useFeedFromNow(
    POLL_MS,
    {
      onFollowing: () => {
        setSince((current) => current ?? new Date());
        setError(undefined);
      },
      onEvents: (page) => setEvents((current) => [...[...page].reverse(), ...current].slice(0, MAX_ROWS)),
      // Shown until the next look succeeds; the tail goes on from the head then.
      onError: setError,
    },
    MAX_ROWS,
  );
  return { events, since, error };
}

export function EventsScreen() {
  const { $api, workspaceId } = useApi();
  const { events, since, error } = useTail();
  const [type, setType] = useState<EventType | "">("");
  // Names of the audiences the events are about (the first page of them; others show their id).
  const audiences = $api.useQuery("get", "/v0/workspaces/{workspaceId}/audiences", {
    params: { path: { workspaceId }, query: { limit: 100, includeArchived: true } },
  });
  const names = new Map(audiences.data?.results.map((audience) => [audience.id, audience.name]));
  // The tail knows newer names than the list may have yet: oldest first, so the newest name wins.
  for (const event of [...events].reverse()) {
    if (event.type === "audience.created" || event.type === "audience.renamed") {
      names.set(event.data.audienceId, event.data.name);
    }
  }
  const shown = type ? events.filter((event) => event.type === type) : events;
  // Who the newest small changes are about, by e-mail address (the id until it is read, or for a
  // member without one).
  const emails = useMemberEmails(shown.flatMap(membersNamedBy));
  const nameOf = (memberId: string) => emails.get(memberId) ?? memberId;

  return (
    <>
      <h1>Events</h1>
      <div className="row">
        <label htmlFor="event-type">Type</label>
        <select id="event-type" value={type} onChange={(event) => setType(event.target.value as EventType | "")}>
          <option value="">All types</option>
          {EVENT_TYPES.map((option) => (
            <option key={option} value={option}>
              {option}
            </option>
          ))}
        </select>
        <span className="muted" role="status">
          {since
            ? `Recent history, following since ${since.toLocaleTimeString()} · ${shown.length.toLocaleString()} ${shown.length === 1 ? "event" : "events"}${events.length === MAX_ROWS ? ` (the last ${MAX_ROWS})` : ""}`
            : "Connecting…"}
        </span>
      </div>
      <ErrorNote error={error} />
      {since && shown.length === 0 && (
        <p className="muted">
          Nothing yet{type ? ` of type ${type}` : ""}: changes to audiences and members appear here as they happen.
        </p>
      )}
      {shown.length > 0 && (
        <DataTable
          className="tail"
          label="Events, newest first"
          columns={["Time", "Type", "Audience", "What happened"]}
        >
          {shown.map((event) => {
            const audienceId = audienceOf(event);
            return (
              <tr key={event.id}>
                <td>
                  <time dateTime={event.createdAt}>{new Date(event.createdAt).toLocaleTimeString()}</time>
                </td>
                <td>{event.type}</td>
                <td>
                  {audienceId && <Link href={`/audiences/${audienceId}`}>{names.get(audienceId) ?? audienceId}</Link>}
                </td>
                <td className="summary">{eventSummary(event, nameOf)}</td>
              </tr>
            );
          })}
        </DataTable>
      )}
    </>
  );
}
