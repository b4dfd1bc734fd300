import type { components } from "../../../generated/api.d.ts";
import { decodeSequenceCursor, encodeSequenceCursor } from "../../domain/cursor.ts";
import { audienceNotFound, BadRequestError, HistoryUnavailableError, memberNotFound } from "../../domain/errors.ts";
import { queryInstant } from "../../domain/query-instant.ts";
import type { Store } from "../../platform/db/database.ts";
import { toMember } from "../membership/member-view.ts";
import type { RecordedMemberRow, RecordRepo } from "./record-repo.ts";

type Schemas = components["schemas"];
type Reason = Schemas["AudienceChangePage"]["results"][number]["reason"];

const DAY_MS = 86_400_000;
/** The record keeps instants to the microsecond, the contract to the millisecond: an instant T
 * asked for covers everything recorded before T + 1 ms. */
const MS = 1;

export interface AsOfPageQuery {
  asOf: string;
  limit?: number | undefined;
  after?: string | undefined;
  before?: string | undefined;
  sortDirection?: "ASC" | "DESC" | undefined;
  search?: string | undefined;
}

export interface ChangesQuery {
  from?: string | undefined;
  to?: string | undefined;
  limit?: number | undefined;
  after?: string | undefined;
}

export interface RecordServiceDeps {
  store: Pick<Store, "db">;
  record: Pick<RecordRepo, "since" | "pageAsOf" | "changes" | "memberAudiencesAsOf">;
  /** MEMBERSHIP_HISTORY_DAYS: how far back the record answers. */
  horizonDays: number;
  /** The current time; a fixed clock in tests. */
  clock?: () => number;
}

/**
 * The membership record's answers: an audience's members at an instant, who came and went between
 * two, a member's audiences at an instant. An instant before the horizon or the workspace's record
 * start is refused (history_unavailable) rather than answered wrongly.
 */
export function createRecordService({ store, record, horizonDays, clock = Date.now }: RecordServiceDeps) {
  /**
   * An instant as the store is asked for it: never much older than the horizon (year 0, say, which
   * the database cannot hold, asks for nothing more), `checked` refusing it after.
   */
  const stored = (at: number, now: number) => new Date(Math.max(at, now - (horizonDays + 1) * DAY_MS) + MS);

  /** The instant asked for, or 400 history_unavailable when the record cannot answer for it. */
  function checked(parameter: "asOf" | "from" | "to", at: number, since: Date, now: number): void {
    const oldest = Math.max(since.getTime(), now - horizonDays * DAY_MS);
    if (at < oldest) throw new HistoryUnavailableError(parameter, new Date(oldest));
  }

  return {
    /**
     * The bound an export of the audience's members at `asOfText` reads the record before, checked
     * as a page's is (404 for an unknown audience, 400 history_unavailable, search refused) so that
     * a file is refused before any byte of it is sent.
     */
    async fileBound(workspaceId: string, audienceId: string, asOfText: string, search?: string): Promise<Date> {
      const now = clock();
      const asOf = Math.min(queryInstant(asOfText, "asOf") as number, now);
      if (search !== undefined) throw searchWithAsOf();
      const since = await record.since(store.db, workspaceId, audienceId);
      if (since === undefined) throw audienceNotFound(audienceId);
      checked("asOf", asOf, since, now);
      return stored(asOf, now);
    },

    async membersAsOf(workspaceId: string, audienceId: string, query: AsOfPageQuery): Promise<Schemas["MemberPage"]> {
      const now = clock();
      const asOf = Math.min(queryInstant(query.asOf, "asOf") as number, now);
      if (query.search !== undefined) throw searchWithAsOf();
      if (query.after !== undefined && query.before !== undefined) {
        throw new BadRequestError("invalid_request", "Send either after or before, not both.", [
          { pointer: "/query/before", message: "cannot be combined with after" },
        ]);
      }
      // A cursor holds a member number, valid for this audience at this instant only.
      const scope = `${audienceId}@${query.asOf}`;
      const backwards = query.before !== undefined;
      const cursorText = query.before ?? query.after;
      const cursor =
        cursorText === undefined ? undefined : decodeSequenceCursor(scope, cursorText, backwards ? "before" : "after");
      const descending = (query.sortDirection ?? "DESC") === "DESC";
      const limit = query.limit ?? 30;
      const page = await record.pageAsOf(store.db, workspaceId, audienceId, {
        before: stored(asOf, now),
        ascending: descending === backwards,
        limit,
        cursor,
      });
      if (page.since === undefined) throw audienceNotFound(audienceId);
      checked("asOf", asOf, page.since, now);
      const rows = backwards ? [...page.rows].reverse() : page.rows;
      const first = rows[0];
      const last = rows.at(-1);
      return {
        totalCount: page.total,
        pageInfo: {
          hasNextPage: backwards ? page.behind : page.more,
          hasPreviousPage: backwards ? page.more : page.behind,
          startCursor: first ? encodeSequenceCursor(scope, first.seq) : "",
          endCursor: last ? encodeSequenceCursor(scope, last.seq) : "",
        },
        results: rows.map(recordedMember),
      };
    },

    async changes(
      workspaceId: string,
      audienceId: string,
      query: ChangesQuery,
    ): Promise<Schemas["AudienceChangePage"]> {
      const now = clock();
      // A page after the first, without bounds of its own, continues the span of its cursor (whose
      // `to` defaulted to the first page's now); the cursor's scope is checked below all the same.
      const continued = query.after !== undefined && query.from === undefined && query.to === undefined;
      const span = continued ? spanOf(audienceId, query.after as string) : undefined;
      const to = span?.to ?? Math.min(queryInstant(query.to, "to") ?? now, now);
      const asked = queryInstant(query.from, "from");
      // By default the day before `to`, or as much of it as the record holds (checked by `to`).
      const from = span?.from ?? asked ?? Math.max(to - DAY_MS, now - horizonDays * DAY_MS);
      if (asked !== undefined && from > to) {
        throw new BadRequestError("invalid_request", "from must not be later than to.", [
          { pointer: "/query/from", message: "must not be later than to" },
        ]);
      }
      const scope = `${audienceId}:${from}:${to}`;
      const cursor = query.after === undefined ? undefined : decodeSequenceCursor(scope, query.after, "after");
      const limit = query.limit ?? 30;
      const changed = await record.changes(store.db, workspaceId, audienceId, {
        from: stored(from, now),
        to: stored(to, now),
        limit,
        cursor,
      });
      if (changed.since === undefined) throw audienceNotFound(audienceId);
      if (asked === undefined) checked("to", to, changed.since, now);
      else checked("from", from, changed.since, now);
      const first = changed.rows[0];
      const last = changed.rows.at(-1);
      return {
        counts: changed.counts,
        moves: changed.moves,
        pageInfo: {
          hasNextPage: changed.more,
          hasPreviousPage: cursor !== undefined,
          startCursor: first ? encodeSequenceCursor(scope, first.seq) : "",
          endCursor: last ? encodeSequenceCursor(scope, last.seq) : "",
        },
        results: changed.rows.map((row) => ({
          memberId: row.memberId,
          change: row.entered ? "entered" : "left",
          reason: row.reason as Reason,
          at: row.at.toISOString(),
        })),
      };
    },

    async memberAudiencesAsOf(
      workspaceId: string,
      memberId: string,
      asOfText: string,
    ): Promise<Schemas["MemberAudienceList"]> {
      const now = clock();
      const asOf = Math.min(queryInstant(asOfText, "asOf") as number, now);
      const found = await record.memberAudiencesAsOf(store.db, workspaceId, memberId, stored(asOf, now));
      if (found.since !== undefined) checked("asOf", asOf, found.since, now);
      if (!found.found) throw memberNotFound(memberId);
      return {
        results: found.rows.map((row) => ({
          id: row.id,
          name: row.name,
          isArchived: row.isArchived,
          reason: enteredBy(row.reason),
          enteredAt: row.at.toISOString(),
        })),
      };
    },
  };
}

const searchWithAsOf = () =>
  new BadRequestError("invalid_request", "search cannot be combined with asOf.", [
    { pointer: "/query/search", message: "cannot be combined with asOf" },
  ]);

/**
 * The span a changes cursor was issued for (its scope names the audience and both instants), or
 * undefined when it is not such a cursor (decodeSequenceCursor then refuses it).
 */
function spanOf(audienceId: string, cursor: string): { from: number; to: number } | undefined {
  let scope: unknown;
  try {
    scope = (JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { s?: unknown } | null)?.s;
  } catch {
    return undefined;
  }
  const parts = typeof scope === "string" ? /^(.*):(\d+):(\d+)$/.exec(scope) : null;
  if (parts?.[1] !== audienceId) return undefined;
  return { from: Number(parts[2]), to: Number(parts[3]) };
}

/** How a member came to be in an audience, as listMemberAudiences tells it. */
function enteredBy(reason: string): "manual" | "rule" {
  // A merge and a snapshot copy members as added by hand (the contract's snapshotAudience).
  return reason === "manual" || reason === "merge" || reason === "snapshot" ? "manual" : "rule";
}

/** A member of an earlier instant: as it is now, or, deleted since, its id and creation. */
function recordedMember(row: RecordedMemberRow): Schemas["Member"] {
  const member = toMember(row);
  return row.deletedAt === null ? member : { ...member, deletedAt: row.deletedAt.toISOString() };
}
export type RecordService = ReturnType<typeof createRecordService>;
