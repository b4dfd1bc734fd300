import { mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import lockfile from "proper-lockfile";

/** The embedded store cannot be opened; the message is one sentence naming the directory and the cause. */
export class StoreOpenError extends Error {
  override name = "StoreOpenError";
}

// Emscripten's errno numbers, which PGlite's file system reports (an ErrnoError with no message).
const EMSCRIPTEN_ERRNO: Record<number, string> = {
  2: "EACCES",
  19: "EDQUOT",
  44: "ENOENT",
  51: "ENOSPC",
  63: "EPERM",
  69: "EROFS",
};
const CAUSES: Record<string, string> = {
  ENOSPC: "the disk is full",
  EDQUOT: "the disk quota is used up",
  EROFS: "the file system is read-only",
  EACCES: "permission denied",
  EPERM: "permission denied",
  ENOENT: "part of the path does not exist",
  ENOTDIR: "part of the path is a file, not a directory",
  EEXIST: "it is a file, not a directory",
};

/** Why a file operation failed, in words, with the system's code. */
export function describeFileError(error: unknown): string {
  const { code, errno, message } = (error ?? {}) as { code?: unknown; errno?: unknown; message?: unknown };
  const name = typeof code === "string" ? code : typeof errno === "number" ? EMSCRIPTEN_ERRNO[errno] : undefined;
  if (name && CAUSES[name]) return `${CAUSES[name]} (${name})`;
  if (typeof message === "string" && message !== "") return message;
  return name ?? String(error);
}

export const dataDirError = (dataDir: string, error: unknown) =>
  new StoreOpenError(
    `The embedded store cannot use the data directory ${resolve(dataDir)}: ${describeFileError(error)}.`,
  );

// The lock is refreshed every UPDATE_MS; one not refreshed for STALE_MS belongs to a process that
// died (SIGKILL, power loss) and is taken over. A start waits that long for a dead owner's lock.
const STALE_MS = 5_000;
const UPDATE_MS = 1_000;

/**
 * Makes the data directory and takes its lock (proper-lockfile: an atomic mkdir, kept fresh while
 * the process lives), so that a second server on the same DATA_DIR refuses to start instead of
 * opening the same files: PGlite has no locking of its own, and two writers corrupt the store.
 * Returns the function that releases the lock.
 */
export async function lockDataDir(dataDir: string, onLost: (error: Error) => void): Promise<() => Promise<void>> {
  try {
    await mkdir(dataDir, { recursive: true });
  } catch (error) {
    throw dataDirError(dataDir, error);
  }
  const lockPath = join(dataDir, "server.lock");
  try {
    return await lockfile.lock(dataDir, {
      lockfilePath: lockPath,
      stale: STALE_MS,
      update: UPDATE_MS,
      // Wait out the lock of a process that just died, not one that is alive and refreshing it.
      retries: { retries: Math.ceil(STALE_MS / 500) + 2, factor: 1, minTimeout: 500, maxTimeout: 500 },
      onCompromised: onLost,
    });
  } catch (error) {
    if ((error as { code?: string }).code === "ELOCKED") {
      throw new StoreOpenError(
        `Another audience-service process is using the data directory ${resolve(dataDir)} (it holds ${resolve(lockPath)}); ` +
          "stop it first, or give this one another DATA_DIR.",
      );
    }
    throw dataDirError(dataDir, error);
  }
}
