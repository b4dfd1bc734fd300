import { Readable } from "node:stream";
import type { operations } from "../../../generated/api.d.ts";
import { audienceNotFound, BadRequestError } from "../../domain/errors.ts";
import { NAMED_FIELDS } from "../../domain/member-merge.ts";
import type { Store } from "../../platform/db/database.ts";
import { keepingReadScope } from "../../platform/db/read-scope.ts";
import type { SqlClient } from "../../platform/db/sql-client.ts";
import { toMember } from "../membership/member-view.ts";
import { exportPlaces, type Place } from "./export-places.ts";
import type { CsvStyle, ExportedMember, MemberExportRepo, Selection, SeqRange } from "./export-repo.ts";

export type ExportFormat = "csv" | "ndjson";

/**
 * The largest piece of a file written to the socket at once: a client that reads slowly then
 * holds one piece in the socket's buffer, not a whole batch.
 */
const PIECE_BYTES = 65_536;

/**
 * The query of a file request, holding only what the client sent (a page's defaults do not apply):
 * absent sortDirection is oldest first; limit, after and before page a listing and are refused.
 */
export type MemberExportQuery = Partial<NonNullable<operations["listMembers"]["parameters"]["query"]>>;

export interface MemberExportDeps {
  store: Pick<Store, "exportDb">;
  exports: MemberExportRepo;
  /**
   * Member numbers one CSV statement reads. A statement sorts its rows into member order: much
   * larger batches spill that sort to disk, much smaller ones pay more statements.
   */
  batchSize: number;
  /** Statements an export keeps running ahead of the client, each on a connection of its own. */
  readAhead: number;
  /** Exports streamed at once, and of those, exports of one API key. */
  concurrency: number;
  perKey: number;
  /** How long a client may take nothing of its file before it is disconnected. */
  writeTimeoutMs: number;
  /** How long a client may take nothing before its place goes to an export that would be refused. */
  stalledAfterMs: number;
}

/** The CSV columns before the custom fields: those an import reads. */
const CSV_COLUMNS = ["id", "email", "alternativeEmails", ...NAMED_FIELDS];
const PAGING = ["limit", "after", "before"] as const;

/** The segments cut into ranges of at most `span` numbers, adjacent segments joined, in order. */
function rangesOf(segments: SeqRange[], span: number, ascending: boolean): SeqRange[] {
  const ranges: SeqRange[] = [];
  for (const segment of segments) {
    for (let from = segment.from; from < segment.to; ) {
      const last = ranges.at(-1);
      if (last && last.to === from && last.to - last.from < span) {
        last.to = Math.min(segment.to, last.from + span);
        from = last.to;
      } else {
        const range = { from, to: Math.min(segment.to, from + span) };
        ranges.push(range);
        from = range.to;
      }
    }
  }
  return ascending ? ranges : ranges.reverse();
}

/**
 * What `read` makes of each range, in order: `depth` reads run ahead of the consumer (on
 * PostgreSQL, on as many connections, so the database works on the next batches while the
 * client takes in the current one), and no more, so memory stays flat.
 */
async function* readAll<T>(
  ranges: SeqRange[],
  depth: number,
  read: (range: SeqRange) => Promise<T>,
): AsyncGenerator<T> {
  const pending: Promise<T>[] = [];
  let next = 0;
  const fill = () => {
    for (; pending.length < depth && next < ranges.length; next++) {
      const reading = read(ranges[next] as SeqRange);
      // Awaited below, unless the client has left meanwhile: then its failure concerns nobody.
      reading.catch(() => {});
      pending.push(reading);
    }
  };
  fill();
  for (let reading = pending.shift(); reading; reading = pending.shift()) {
    const body = await reading;
    fill();
    yield body;
  }
}

/**
 * The parts as bytes, cut into pieces of at most PIECE_BYTES (views: nothing is copied). The
 * stream asks for the next piece once the client has made room for it: until then, and after
 * the last piece, the place is told that the file waits for its client.
 */
async function* inPieces(parts: AsyncIterable<string>, place: Place): AsyncGenerator<Buffer> {
  for await (const part of parts) {
    const bytes = Buffer.from(part);
    for (let at = 0; at < bytes.length; at += PIECE_BYTES) {
      place.waiting();
      yield bytes.subarray(at, at + PIECE_BYTES);
      place.taken();
    }
  }
  place.waiting();
}

/**
 * Every member of a workspace or of an audience as one file, CSV or NDJSON, streamed: batches are
 * read one statement each as the client takes the file in, so memory stays flat whatever the
 * size. A file is not a snapshot: each batch shows its members as they are when it is read, and
 * members created after the export began are left out. A file as of an earlier instant lists
 * exactly the audience's members then (from the membership record), with their data as it is now.
 */
export function createMemberExport({
  store,
  exports,
  batchSize,
  readAhead,
  concurrency,
  perKey,
  writeTimeoutMs,
  stalledAfterMs,
}: MemberExportDeps) {
  const places = exportPlaces({ concurrency, perKey, writeTimeoutMs, stalledAfterMs });

  async function csv(db: SqlClient, selection: Selection, segments: SeqRange[], ascending: boolean, style: CsvStyle) {
    const found = new Set<string>();
    // Collected over the batches' ranges: over much larger ranges PostgreSQL chose to read the
    // whole table for each (a parallel sequential scan).
    const keyRanges = rangesOf(segments, batchSize, true);
    for await (const keys of readAll(keyRanges, readAhead, (range) => exports.fieldKeys(db, selection, range))) {
      for (const key of keys) found.add(key);
    }
    // Keys are ASCII (letters, digits, _), so code unit order is byte order, and none needs quoting.
    const keys = [...found].sort();
    const lines = readAll(rangesOf(segments, batchSize, ascending), readAhead, (range) =>
      exports.csvLines(db, selection, range, ascending, keys, style),
    );
    return { head: `${[...CSV_COLUMNS, ...keys].join(",")}\n`, parts: lines };
  }

  // NDJSON lines are made here, in one stretch of CPU per batch that holds up every other request
  // of the process: batches a 32nd of the CSV's keep that stretch short enough for other tenants'
  // pages to keep their latency. Each batch becomes its lines as soon as it is read, so the
  // batches read ahead are held as text, not as objects.
  const ndjsonBatchSize = Math.max(1, Math.floor(batchSize / 32));
  function ndjson(db: SqlClient, selection: Selection, segments: SeqRange[], ascending: boolean) {
    return readAll(rangesOf(segments, ndjsonBatchSize, ascending), readAhead, async (range) => {
      const rows = await exports.members(db, selection, range, ascending);
      return rows.length === 0 ? "" : `${rows.map((row) => JSON.stringify(exported(row))).join("\n")}\n`;
    });
  }

  return {
    writeTimeoutMs,
    /**
     * The file of the members the query selects. Resolves once its first batch is read, so an
     * unknown audience or a database that does not answer fails the request before it is
     * answered; a failure later ends the stream (the client sees a truncated transfer). `keyId`
     * is the API key's: the file holds one of the process's places, and one of the key's, until
     * the stream closes; when none is free it is refused (TooManyExportsError, or a 503) unless a
     * stalled reader's place can be taken (export-places.ts). `asOf`: the audience's members at an
     * earlier instant instead, the exclusive bound the membership record is read before (the
     * history's fileBound, which checked the instant and the audience).
     */
    async open(
      workspaceId: string,
      format: ExportFormat,
      query: MemberExportQuery,
      keyId: string,
      asOf?: Date,
    ): Promise<Readable> {
      const paging = PAGING.filter((name) => query[name] !== undefined);
      if (paging.length > 0) {
        throw new BadRequestError(
          "invalid_request",
          `A file holds every member; ${paging.join(", ")} page a listing (Accept: application/json).`,
          paging.map((name) => ({ pointer: `/query/${name}`, message: "cannot be combined with a file Accept" })),
        );
      }
      const place = places.take(`${workspaceId}\u0000${keyId}`);
      try {
        const { audienceId } = query;
        const selection: Selection =
          asOf !== undefined && audienceId !== undefined
            ? { workspaceId, audienceId, asOf }
            : { workspaceId, audienceId, search: query.search?.trim() || undefined };
        // Its batches are read as the client takes the file in, outside the request: on the
        // replica (or the primary) the request's read scope chose.
        const db = keepingReadScope(store.exportDb);
        const segments = await exports.segments(db, selection);
        if (!segments) throw audienceNotFound(audienceId as string);
        const ascending = query.sortDirection !== "DESC";
        const { head, parts } =
          format === "csv"
            ? await csv(db, selection, segments, ascending, { escapeFormulas: query.csvEscape !== "none" })
            : { head: "", parts: ndjson(db, selection, segments, ascending) };
        const first = await parts.next();
        async function* file() {
          const opening = head + (first.done ? "" : first.value);
          if (opening !== "") yield opening;
          for await (const part of parts) if (part !== "") yield part;
        }
        // Closed when the file is sent whole, fails, or its client leaves (Fastify destroys it then),
        // or cut by its place when the client stalls.
        const stream = Readable.from(inPieces(file(), place), { objectMode: false });
        place.hold(stream);
        return stream;
      } catch (error) {
        place.release();
        throw error;
      }
    },
  };
}

/** A member as a line of NDJSON: deleted since the instant of the file, with when. */
function exported(row: ExportedMember) {
  const { deletedAt, ...member } = row;
  return deletedAt === undefined ? toMember(member) : { ...toMember(member), deletedAt: deletedAt.toISOString() };
}

export type MemberExport = ReturnType<typeof createMemberExport>;
