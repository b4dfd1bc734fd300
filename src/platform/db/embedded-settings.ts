// The embedded store's PostgreSQL settings, in one place: every embedded database opens with them
// (src/platform/db/pglite.ts).
//
// PGlite's heap is one WebAssembly memory that grows and never shrinks: whatever PostgreSQL
// allocates once stays resident for the life of the process. PostgreSQL's defaults are sized for a
// server with many connections and its own machine; here there is one connection in a process
// that shares the machine, and the operating system's page cache already keeps recently read
// pages of the data files in memory.
import type { PGliteOptions } from "@electric-sql/pglite";

const SETTINGS = {
  // Allocated and zeroed in full at start: initdb's choice was most of the memory PGlite took to
  // open an existing store. A miss is a read from the page cache, not the disk.
  shared_buffers: "8MB",
  // Per sort or hash of a statement. What a statement takes stays resident (the WebAssembly memory
  // does not shrink) until the instance is replaced (pglite-recycling.ts), and an import's chunk
  // runs several at once. Beyond this a sort or hash goes to a temporary file.
  work_mem: "1MB",
  // One connection. Every slot costs shared memory (locks, snapshots).
  max_connections: "5",
  // Index builds (a migration over a large table) beyond this sort on disk, instead of growing the
  // heap for good by PostgreSQL's 64MB.
  maintenance_work_mem: "16MB",
  // PGlite runs PostgreSQL in single-user mode, where no checkpoint is ever triggered by the
  // volume of WAL (that is the checkpointer process's job, and there is none): the store runs its
  // own (wal-checkpoints.ts). After each, PostgreSQL keeps or recycles old segments as future
  // ones up to max_wal_size (1GB by default: a restart after a large import kept 721 MB of them).
  // Two segments of 16 MB are the least either setting takes.
  max_wal_size: "32MB",
  min_wal_size: "32MB",
} as const;

// Left at PostgreSQL's defaults: wal_buffers (1/32 of shared_buffers: 256kB here), temp_buffers
// (only for temporary tables, which the service does not create).

const asArguments = (settings: Record<string, string>) =>
  Object.entries(settings).flatMap(([name, value]) => ["-c", `${name}=${value}`]);

/**
 * PGlite options for an embedded store. startParams keep PGlite's own (single-user mode, fsync
 * off, …) and add the settings, which override postgresql.conf, so that they also apply to data
 * directories made before them. initdb gets them as well: its own runs of PostgreSQL stay small,
 * and a new directory's postgresql.conf says what is in force.
 */
export function embeddedOptions(
  defaultStartParams: readonly string[],
): Pick<PGliteOptions, "startParams" | "initDbStartParams"> {
  return {
    startParams: [...defaultStartParams, ...asArguments(SETTINGS)],
    initDbStartParams: asArguments(SETTINGS),
  };
}

/**
 * When the store on disk replaces its PGlite instance, whose WebAssembly memory never shrinks
 * (pglite-recycling.ts): once the process has grown by this much since the instance opened, and
 * not more often than this, since a replacement holds every statement for the time of an open and
 * starts PostgreSQL with cold caches.
 */
export const RECYCLING = { boundBytes: 40 * 1024 * 1024, minIntervalMs: 30_000, measureEveryMs: 1_000 } as const;
