import { Readable } from "node:stream";
import { audienceNotFound, BadRequestError } from "../domain/errors.ts";
import { NAMED_FIELDS } from "../domain/member-merge.ts";
import type { Store } from "../store/database.ts";
import type { Batch, MemberExportRepo, Selection, SeqRange } from "../store/member-export.ts";
import { toMember } from "./member-view.ts";

export type ExportFormat = "csv" | "ndjson";

/** The query of a file request, holding only what the client sent (a page's defaults do not apply). */
export interface MemberExportQuery {
  audienceId?: string | undefined;
  search?: string | undefined;
  /** Absent: oldest first. */
  sortDirection?: "ASC" | "DESC" | undefined;
  /** A file holds every member: these page a listing and are refused. */
  limit?: number | undefined;
  after?: string | undefined;
  before?: string | undefined;
}

export interface MemberExportDeps {
  store: Pick<Store, "db">;
  exports: MemberExportRepo;
  /** Member numbers one statement reads (one bitset chunk's worth by default). */
  batchSize?: number | undefined;
}

/** The CSV columns before the custom fields: those an import reads. */
const CSV_COLUMNS = ["id", "email", "alternativeEmails", ...NAMED_FIELDS];
/** The custom field keys are collected over ranges this many times larger than a batch's. */
const KEY_RANGES = 8;
const PAGING = ["limit", "after", "before"] as const;

/**
 * The batches of a scan of `bounds`, ranges of `span` member numbers in the scan's direction, each
 * read while the one before is consumed; the store's `next` says where the following range starts.
 */
async function* scan<T>(
  bounds: SeqRange,
  span: number,
  ascending: boolean,
  read: (range: SeqRange) => Promise<Batch<T>>,
): AsyncGenerator<T> {
  const rangeAt = (position: number | null): SeqRange | undefined => {
    if (position === null || (ascending ? position >= bounds.to : position <= bounds.from)) return undefined;
    return ascending
      ? { from: position, to: Math.min(position + span, bounds.to) }
      : { from: Math.max(position - span, bounds.from), to: position };
  };
  const readAt = (range: SeqRange | undefined) => {
    const reading = range && read(range);
    // Awaited below, unless the client has left meanwhile: then its failure concerns nobody.
    reading?.catch(() => {});
    return reading;
  };
  let pending = readAt(rangeAt(ascending ? bounds.from : bounds.to));
  while (pending) {
    const batch = await pending;
    pending = readAt(rangeAt(batch.next));
    yield batch.body;
  }
}

/**
 * Every member of a workspace or of an audience as one file, CSV or NDJSON, streamed: batches are
 * read one statement at a time as the client takes the file in (the next one is read while the
 * current one is written), so memory stays flat whatever the size. A file is not a snapshot:
 * each batch shows its members as they are when it is read, and members created after the
 * export began are left out.
 */
export function createMemberExport({ store, exports, batchSize = 8192 }: MemberExportDeps) {
  async function csv(selection: Selection, bounds: SeqRange, ascending: boolean) {
    const found = new Set<string>();
    const reading = scan(bounds, batchSize * KEY_RANGES, true, (range) =>
      exports.fieldKeys(store.db, selection, range),
    );
    for await (const keys of reading) for (const key of keys) found.add(key);
    // Keys are ASCII (letters, digits, _), so code unit order is byte order, and none needs quoting.
    const keys = [...found].sort();
    const lines = scan(bounds, batchSize, ascending, (range) =>
      exports.csvLines(store.db, selection, range, ascending, keys),
    );
    return { head: `${[...CSV_COLUMNS, ...keys].join(",")}\n`, parts: lines };
  }

  async function* ndjson(selection: Selection, bounds: SeqRange, ascending: boolean) {
    const batches = scan(bounds, batchSize, ascending, (range) =>
      exports.members(store.db, selection, range, ascending),
    );
    for await (const rows of batches) {
      if (rows.length > 0) yield `${rows.map((row) => JSON.stringify(toMember(row))).join("\n")}\n`;
    }
  }

  return {
    /**
     * The file of the members the query selects. Resolves once its first batch is read, so an
     * unknown audience or a database that does not answer fails the request before it is
     * answered; a failure later ends the stream (the client sees a truncated transfer).
     */
    async open(workspaceId: string, format: ExportFormat, query: MemberExportQuery): Promise<Readable> {
      const paging = PAGING.filter((name) => query[name] !== undefined);
      if (paging.length > 0) {
        throw new BadRequestError(
          "invalid_request",
          `A file holds every member; ${paging.join(", ")} page a listing (Accept: application/json).`,
          paging.map((name) => ({ pointer: `/query/${name}`, message: "cannot be combined with a file Accept" })),
        );
      }
      const { audienceId } = query;
      const selection = { workspaceId, audienceId, search: query.search?.trim() || undefined };
      const bounds = await exports.bounds(store.db, selection);
      if (!bounds) throw audienceNotFound(audienceId as string);
      const ascending = query.sortDirection !== "DESC";
      const { head, parts } =
        format === "csv"
          ? await csv(selection, bounds, ascending)
          : { head: "", parts: ndjson(selection, bounds, ascending) };
      const first = await parts.next();
      async function* file() {
        const opening = head + (first.done ? "" : first.value);
        if (opening !== "") yield opening;
        for await (const part of parts) if (part !== "") yield part;
      }
      return Readable.from(file(), { objectMode: false });
    },
  };
}

export type MemberExport = ReturnType<typeof createMemberExport>;
