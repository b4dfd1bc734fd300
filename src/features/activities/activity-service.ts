import type { components } from "../../../generated/api.d.ts";
import { decodeCursor, encodeCursor } from "../../domain/cursor.ts";
import { BadRequestError, memberNotFound } from "../../domain/errors.ts";
import { queryInstant } from "../../domain/query-instant.ts";
import type { Store } from "../../platform/db/database.ts";
import type { ActivityRepo, ActivityRow } from "../membership/activity-repo.ts";
import type { MembershipService, MembershipWriter } from "../membership/membership-service.ts";
import { type MemberWrites, resolveMemberInputs } from "../membership/upsert/member-resolution.ts";
import type { ActivityReadRepo, TimelineRow } from "./activity-read-repo.ts";
import type { CheckedActivity } from "./ingest-check.ts";

type Schemas = components["schemas"];

const DAY_MS = 86_400_000;
const CURSOR_SCOPE = "activities";

export interface ActivityServiceDeps {
  store: Pick<Store, "db">;
  membership: Pick<MembershipService, "workspaceWrite">;
  members: MemberWrites;
  activities: Pick<ActivityRepo, "storedIds" | "store">;
  reads: ActivityReadRepo;
  /** Checks a request's entries (ingest-check.ts); throws invalid_activity at the first bad one. */
  check: (entries: unknown[], now: number) => CheckedActivity[];
  /** ACTIVITY_RETENTION_DAYS: older activities are not stored. */
  retentionDays: number;
  clock?: () => number;
}

export interface TimelineParameters {
  type?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
  limit?: number | undefined;
  after?: string | undefined;
}

/** What storing a batch did with its entries (an ingest's answer). */
export type IngestCounts = Schemas["IngestActivitiesResult"];

/** Activities in (ingest) and out (a member's timeline, the workspace's types). */
/** The earliest and latest instants PostgreSQL reads as timestamps (year 0 is not one). */
const EARLIEST = Date.parse("0001-01-01T00:00:00Z");
const LATEST = Date.parse("9999-12-31T23:59:59.999Z");

/**
 * A timeline bound as a Date, held within the years PostgreSQL reads: a bound before every
 * activity (or after every one) selects the same as the earliest (latest) instant it can hold.
 */
function boundOf(value: string | undefined, name: "from" | "to"): Date | undefined {
  const at = queryInstant(value, name);
  return at === undefined ? undefined : new Date(Math.min(LATEST, Math.max(EARLIEST, at)));
}

export function createActivityService(deps: ActivityServiceDeps) {
  const { membership, members, activities } = deps;
  const clock = deps.clock ?? Date.now;

  /**
   * Stores checked entries inside a write of the workspace that holds its member lock (the ingest's
   * own, or an import chunk's): entries older than the retention are counted as expired, an id
   * repeated in the batch or already stored as a duplicate. When every entry names an existing
   * member by id, one statement stores them, leaving out the ids already stored (the usual
   * ingest); otherwise that statement wrote nothing and said which ids are stored, and the members
   * of the entries left are resolved (created as addAudienceMembers creates them: a duplicate or
   * expired entry creates none) before they are stored. Every way activities come in stores them here.
   * `last`: nothing follows in the write (membership-writer-types.ts followActivities).
   */
  async function store(
    w: MembershipWriter,
    checked: CheckedActivity[],
    now: number,
    { last = false }: { last?: boolean } = {},
  ): Promise<IngestCounts> {
    const workspaceId = w.workspaceId;
    const cutoff = now - deps.retentionDays * DAY_MS;
    let expired = 0;
    let repeated = 0;
    const ids = new Set<string>();
    const fresh: CheckedActivity[] = [];
    for (const entry of checked) {
      if (entry.occurredAt.getTime() < cutoff) expired += 1;
      else if (entry.id !== undefined && ids.has(entry.id)) repeated += 1;
      else {
        if (entry.id !== undefined) ids.add(entry.id);
        fresh.push(entry);
      }
    }
    const counts = (accepted: number, createdMembers: number) => ({
      accepted,
      duplicates: repeated + fresh.length - accepted,
      expired,
      createdMembers,
    });
    const first = fresh.some((entry) => entry.memberId !== undefined)
      ? await activities.store(w.tx, workspaceId, fresh.map(rowOf))
      : undefined;
    if (first?.written) {
      // The audiences whose rules count these activities follow, in this transaction (`activity`).
      await w.followActivities(first.stored, { last });
      return counts(first.accepted, 0);
    }
    const stored = first?.storedIds ?? (await activities.storedIds(w.tx, workspaceId, [...ids]));
    const kept = fresh.filter((entry) => entry.id === undefined || !stored.has(entry.id));
    const bareIds = [...new Set(kept.flatMap((entry) => entry.memberId ?? []))];
    const emails = [...new Set(kept.flatMap((entry) => entry.email ?? []))];
    const resolved = await resolveMemberInputs(
      members,
      w.tx,
      workspaceId,
      emails.map((email) => ({ email })),
      bareIds,
    );
    w.publish(...resolved.events);
    // One input per e-mail, so each outcome names the member of that e-mail.
    const byEmail = new Map(emails.map((email, i) => [email, resolved.outcomes[i]?.id as string]));
    const rows = kept.map((entry) => ({
      ...rowOf(entry),
      seq: resolved.seqOf.get(entry.memberId ?? (byEmail.get(entry.email as string) as string)) as number,
    }));
    const second = await activities.store(w.tx, workspaceId, rows);
    if (!second.written) throw new Error("activities of resolved members were not stored");
    // The audiences whose rules count these activities follow (`activity`); then the members
    // created have every rule-based audience to follow, as when added otherwise.
    await w.followActivities(second.stored);
    await w.followMembers([...resolved.changedIds, ...resolved.createdBare]);
    return counts(second.accepted, resolved.created + resolved.createdBare.length);
  }

  return {
    /** Checks a request's entries (all or nothing), then stores them in one write of the workspace. */
    ingest(
      workspaceId: string,
      request: Schemas["IngestActivitiesRequest"],
    ): Promise<Schemas["IngestActivitiesResult"]> {
      const now = clock();
      const checked = deps.check(request.activities, now);
      return membership.workspaceWrite(workspaceId, { memberWrites: true, lockWithFirstRead: true }, async (w) => {
        // The member lock with the rules that follow activities: one statement.
        await w.readActivityRules();
        // Nothing follows the ingest in its write: it may commit with its last statement.
        return store(w, checked, now, { last: true });
      });
    },

    store,

    /**
     * Checks one entry as the ingest checks each of its own (an import's row): the entry, or why
     * it is refused, as the problem's pointer below the entry (`occurredAt`, `properties/amount`)
     * and message.
     */
    checkOne(entry: unknown, now: number): { checked: CheckedActivity } | { pointer: string; message: string } {
      try {
        return { checked: deps.check([entry], now)[0] as CheckedActivity };
      } catch (error) {
        const [first] = error instanceof BadRequestError ? (error.errors ?? []) : [];
        if (!first) throw error;
        return { pointer: first.pointer.replace(/^\/body\/activities\/0\/?/, ""), message: first.message };
      }
    },

    now: () => clock(),

    async timeline(workspaceId: string, memberId: string, query: TimelineParameters): Promise<Schemas["ActivityPage"]> {
      const limit = query.limit ?? 100;
      const after = query.after === undefined ? undefined : positionOf(query.after);
      const rows = await deps.reads.timeline(deps.store.db, workspaceId, memberId, {
        type: query.type,
        from: boundOf(query.from, "from"),
        to: boundOf(query.to, "to"),
        after,
        // One more than the page, to tell whether another follows.
        limit: limit + 1,
      });
      if (!rows) throw memberNotFound(memberId);
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return {
        results: page.map(toActivity),
        pageInfo: {
          hasNextPage: rows.length > limit,
          endCursor: last ? encodeCursor(CURSOR_SCOPE, { createdAt: last.occurredAt, id: last.num }) : "",
        },
      };
    },

    async types(workspaceId: string): Promise<Schemas["ActivityTypeList"]> {
      const rows = await deps.reads.types(deps.store.db, workspaceId);
      return {
        results: rows.map((row) => ({
          type: row.type,
          count: row.count,
          lastAt: row.lastAt.toISOString(),
          properties: Object.keys(row.properties)
            .sort()
            .map((key) => ({ key, types: row.properties[key] ?? [] })),
        })),
      };
    },
  };
}

/** A timeline cursor: the occurredAt and number of the last activity of the previous page. */
function positionOf(cursor: string): { occurredAt: Date; num: string } {
  const { createdAt, id } = decodeCursor(CURSOR_SCOPE, cursor, "after");
  if (!/^\d{1,18}$/.test(id)) {
    throw new BadRequestError("invalid_cursor", "after is not a cursor issued by this listing.", [
      { pointer: "/query/after", message: "is not a cursor issued by this listing" },
    ]);
  }
  return { occurredAt: createdAt, num: id };
}

/** An entry as a row to store, its member named by id (or by e-mail, then resolved first). */
const rowOf = (entry: CheckedActivity): ActivityRow => ({
  memberId: entry.memberId,
  type: entry.type,
  occurredAt: entry.occurredAt,
  id: entry.id,
  properties: entry.properties,
});

const toActivity = (row: TimelineRow): Schemas["Activity"] => ({
  id: row.id,
  type: row.type,
  occurredAt: row.occurredAt.toISOString(),
  properties: row.properties ?? {},
});

export type ActivityService = ReturnType<typeof createActivityService>;
