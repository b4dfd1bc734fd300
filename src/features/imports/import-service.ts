import type { components } from "../../../generated/api.d.ts";
import {
  audienceArchived,
  audienceNotFound,
  BadRequestError,
  ConflictError,
  importNotFound,
  payloadTooLarge,
} from "../../domain/errors.ts";
import { newId } from "../../domain/ids.ts";
import type { Store } from "../../platform/db/database.ts";
import type { AudienceRepo } from "../membership/audience-repo.ts";
import { createUploadCheck } from "./csv-upload-check.ts";
import type { ImportKind } from "./import-reader.ts";
import type { ImportRepo, ImportRow } from "./import-repo.ts";

type Import = components["schemas"]["Import"];

/** Jobs that have not ended, per workspace: each holds its whole file in the store meanwhile. */
export const MAX_UNFINISHED_IMPORTS = 10;
/** Size of the parts a file is stored in. */
const PART_BYTES = 1_048_576;
/**
 * A slow upload stores what it has at least this often, which also shows the sweeper (see
 * import-runner.ts) that it is alive.
 */
const STORE_EVERY_MS = 30_000;

export interface ImportServiceDeps {
  store: Pick<Store, "db" | "transaction">;
  imports: Pick<ImportRepo, "begin" | "appendPart" | "queue" | "discard" | "find" | "list" | "cancel">;
  audiences: Pick<AudienceRepo, "find">;
  /** The largest file accepted (IMPORT_MAX_BYTES). */
  maxBytes: number;
  /** Told when a job is queued, so that a runner starts on it at once. */
  queued: () => void;
}

/** A job without a name answers none: its shape is the one clients knew before names existed. */
export const toImport = ({ name, ...row }: ImportRow): Import => ({
  ...row,
  ...(name === null ? {} : { name }),
  createdAt: row.createdAt.toISOString(),
  finishedAt: row.finishedAt?.toISOString() ?? null,
});

/** Import jobs: uploading a CSV file into a queued job, and reading or cancelling jobs. */
export function createImportService({ store, imports, audiences, maxBytes, queued }: ImportServiceDeps) {
  const tooLarge = () => payloadTooLarge(`An import's file may be at most ${maxBytes} bytes (IMPORT_MAX_BYTES).`);

  /** Stores the file part after part as it arrives, checking it on the way (see createUploadCheck). */
  async function storeFile(
    workspaceId: string,
    id: string,
    kind: ImportKind,
    body: AsyncIterable<Uint8Array>,
  ): Promise<void> {
    const check = createUploadCheck(kind);
    let received = 0;
    let part = 0;
    let pending: Uint8Array[] = [];
    let pendingBytes = 0;
    let storedAt = Date.now();
    const flush = async () => {
      await imports.appendPart(store.db, workspaceId, id, part++, Buffer.concat(pending));
      pending = [];
      pendingBytes = 0;
      storedAt = Date.now();
    };
    for await (const chunk of body) {
      received += chunk.length;
      if (received > maxBytes) throw tooLarge();
      await check.push(chunk);
      pending.push(chunk);
      pendingBytes += chunk.length;
      if (pendingBytes >= PART_BYTES || Date.now() - storedAt >= STORE_EVERY_MS) await flush();
    }
    await check.end();
    if (pendingBytes > 0) await flush();
  }

  return {
    /**
     * Stores an uploaded file as a queued job. Whatever goes wrong on the way (a bad file, a
     * file too large, a client that goes away), the job and its parts are removed again; if
     * this process dies meanwhile, the runner's sweep removes them.
     */
    async create(
      workspaceId: string,
      query: { audienceId?: string | undefined; kind?: ImportKind | undefined; name?: string | undefined },
      body: AsyncIterable<Uint8Array>,
      declaredBytes: number | undefined,
    ): Promise<Import> {
      const { audienceId, kind = "members", name = null } = query;
      if (audienceId !== undefined && kind === "activities") {
        throw new BadRequestError("invalid_request", "An import of activities takes no audienceId.", [
          { pointer: "/query/audienceId", message: "is not taken with kind=activities" },
        ]);
      }
      if (audienceId !== undefined) {
        const audience = await audiences.find(store.db, workspaceId, audienceId);
        if (!audience) throw audienceNotFound(audienceId);
        if (audience.isArchived) throw audienceArchived(audienceId, audience.name);
      }
      if (declaredBytes !== undefined && declaredBytes > maxBytes) throw tooLarge();
      const id = newId("imp");
      const begun = await store.transaction((tx) =>
        imports.begin(tx, { workspaceId, id, kind, audienceId: audienceId ?? null, name }, MAX_UNFINISHED_IMPORTS),
      );
      if (!begun) {
        throw new ConflictError(
          "too_many_imports",
          `This workspace already has ${MAX_UNFINISHED_IMPORTS} imports that have not ended; wait for one to end, or cancel one.`,
        );
      }
      let row: ImportRow;
      try {
        await storeFile(workspaceId, id, kind, body);
        row = await store.transaction((tx) => imports.queue(tx, workspaceId, id));
      } catch (error) {
        await imports.discard(store.db, workspaceId, id).catch(() => {});
        throw error;
      }
      queued();
      return toImport(row);
    },

    async get(workspaceId: string, id: string): Promise<Import> {
      const row = await imports.find(store.db, workspaceId, id);
      if (!row) throw importNotFound(id);
      return toImport(row);
    },

    async list(workspaceId: string, query: { limit?: number }): Promise<components["schemas"]["ImportList"]> {
      const rows = await imports.list(store.db, workspaceId, query.limit ?? 20);
      return { results: rows.map(toImport) };
    },

    /** Cancels a job; a cancelled one is returned again, one that ended otherwise is 409. */
    async cancel(workspaceId: string, id: string): Promise<Import> {
      const cancelled = await store.transaction((tx) => imports.cancel(tx, workspaceId, id));
      if (cancelled) return toImport(cancelled);
      const row = await imports.find(store.db, workspaceId, id);
      if (!row) throw importNotFound(id);
      if (row.status === "cancelled") return toImport(row);
      throw new ConflictError("import_finished", `Import ${id} already ${row.status}; it cannot be cancelled.`);
    },
  };
}

export type ImportService = ReturnType<typeof createImportService>;
