import type { Prisma } from "../../../generated/prisma/client.ts";
import { audienceArchived, audienceNotFound } from "../../domain/errors.ts";
import type { SqlClient } from "../../platform/db/sql-client.ts";
import type { AudienceRow } from "./audience-repo.ts";
import type { LockRepo } from "./lock-repo.ts";

export type LockRows = Pick<
  LockRepo,
  | "memberWrites"
  | "memberWritesReading"
  | "audiences"
  | "audienceReading"
  | "audiencesForUpdateSql"
  | "allAudiences"
  | "ruleOutdated"
>;

/** One read of readUnderMembers: as the member lock's statement reads it, and on its own. */
export interface MembersRead<T> {
  /** The read as a scalar subquery giving JSON text (a *Json function of its repository). */
  alongside: () => Prisma.Sql;
  /** That answer as what it is. */
  parse: (json: string) => T;
  /** The read in a statement of its own, under the member lock already held. */
  read: () => Promise<T>;
}

/** An audience a write changes: it must exist (404) and be unarchived (409). */
export function writableOrRefused(id: string, row: AudienceRow | undefined): AudienceRow {
  if (!row) throw audienceNotFound(id);
  if (row.isArchived) throw audienceArchived(id, row.name);
  return row;
}

/** A write asked for its locks in an order that could deadlock: a bug, not a client error. */
export class LockOrderError extends Error {
  override name = "LockOrderError";
}

/**
 * The locks of one write transaction, the only place that takes them, in one order so that two
 * writes never wait on each other in a cycle:
 *
 * 1. the workspace's member lock, before anything else, by every write that creates, changes or
 *    deletes members, changes an audience's members, evaluates a rule or locks more than one
 *    audience (so those run one at a time per workspace);
 * 2. then audience rows, each call's in id order (calls out of order only under the member lock).
 *
 * A write without the member lock locks one audience at most: holding a single lock, it cannot
 * close a cycle. Calls that break these rules throw LockOrderError before touching the database.
 */
export function createWriteLocks(repo: LockRows, tx: SqlClient, workspaceId: string) {
  let memberLock = false;
  let everyAudience = false;
  const held = new Map<string, "update" | "share">();

  const hold = (rows: Pick<AudienceRow, "id">[], mode: "update" | "share") => {
    for (const { id } of rows) if (held.get(id) !== "update") held.set(id, mode);
  };
  const beforeAudiences = (count: number, what: string) => {
    const after = new Set(held.keys()).size + count;
    if (!memberLock && after > 1) {
      throw new LockOrderError(`${what}: several audiences are locked only under the workspace's member lock`);
    }
  };
  const beforeMembers = () => {
    if (memberLock) throw new LockOrderError("the member lock is taken once");
    if (held.size > 0) throw new LockOrderError("the member lock is taken before any audience lock");
  };
  const underMemberLock = (what: string) => {
    if (!memberLock) throw new LockOrderError(`${what} needs the workspace's member lock`);
  };

  /** Locks an audience to change it, archived or not; undefined when there is none. */
  const audience = async (id: string): Promise<AudienceRow | undefined> => {
    if (!held.has(id)) beforeAudiences(1, "audience");
    const [row] = await repo.audiences(tx, workspaceId, [id], "update");
    if (row) hold([row], "update");
    return row;
  };

  /**
   * The member lock, as `members`, reading `alongside` (a scalar subquery) in the same statement:
   * its answer, or undefined when it must be read again under the lock (a member write committed
   * while this one waited, or the rows are not the database's: fakes).
   */
  const membersReading = async (alongside: Prisma.Sql): Promise<string | undefined> => {
    beforeMembers();
    const read = await repo.memberWritesReading(tx, workspaceId, alongside);
    memberLock = true;
    return read;
  };

  return {
    /** The workspace's member lock; only as the first lock of the transaction. */
    async members(): Promise<void> {
      if (memberLock) return;
      beforeMembers();
      await repo.memberWrites(tx, workspaceId);
      memberLock = true;
    },

    membersReading,

    /**
     * A read a write makes under the member lock. With `lockFirst` (the write's lockWithFirstRead)
     * while the lock is still to be taken, the lock's statement reads it too (`alongside`, as
     * `membersReading`) and `parse` makes its answer: the lock and the write's first read in one
     * round trip. Otherwise, or when that answer must be read again, the lock must be held
     * (LockOrderError naming `what`) and `read` reads it in a statement of its own.
     */
    async readUnderMembers<T>(lockFirst: boolean, what: string, read: MembersRead<T>): Promise<T> {
      if (lockFirst && !memberLock) {
        const answer = await membersReading(read.alongside());
        if (answer !== undefined) return read.parse(answer);
      }
      underMemberLock(what);
      return read.read();
    },

    /** Locks an audience to change it; it must exist (404) and be unarchived (409). */
    async writable(id: string): Promise<AudienceRow> {
      return writableOrRefused(id, await audience(id));
    },

    audience,

    /**
     * As `writable`, reading `alongside` (a scalar subquery) in the same statement: its answer, or
     * undefined where the rows are not the database's (fakes). Only what no write can change while
     * this one holds its locks may be read so: the statement's snapshot predates the audience's lock.
     * With `memberLock`, the member lock first, in the same statement (as `membersReading`:
     * undefined also when a member write committed while this one waited for it).
     */
    async writableReading(
      id: string,
      alongside: Prisma.Sql,
      options: { memberLock?: boolean } = {},
    ): Promise<{ row: AudienceRow; read: string | undefined }> {
      const { writable, read } = await this.writableReadingLater(id, alongside, options);
      return { row: writable(), read };
    },

    /**
     * As `writableReading`, the audience's 404 and 409 told only when the caller calls `writable`
     * (the audience, if there is one, is locked either way): a rule's change answers a bad rule
     * (400) before an unknown or archived audience.
     */
    async writableReadingLater(
      id: string,
      alongside: Prisma.Sql,
      { memberLock: withMembers = false }: { memberLock?: boolean } = {},
    ): Promise<{ writable: () => AudienceRow; read: string | undefined }> {
      if (withMembers) beforeMembers();
      else if (!held.has(id)) beforeAudiences(1, "audience");
      const { row, read } = await repo.audienceReading(tx, workspaceId, id, alongside, withMembers);
      if (withMembers) memberLock = true;
      if (row) hold([row], "update");
      return { writable: () => writableOrRefused(id, row), read };
    },

    /**
     * Locks audiences that a write reads as sources (FOR SHARE: their members cannot change
     * meanwhile); each must exist (404) and be unarchived (409), checked in the order given.
     */
    async sources(ids: string[]): Promise<Map<string, AudienceRow>> {
      beforeAudiences(ids.filter((id) => !held.has(id)).length, "sources");
      const rows = await repo.audiences(tx, workspaceId, ids, "share");
      hold(rows, "share");
      const byId = new Map(rows.map((row) => [row.id, row]));
      for (const id of ids) {
        const source = byId.get(id);
        if (!source) throw audienceNotFound(id);
        if (source.isArchived) throw audienceArchived(id, source.name);
      }
      return byId;
    },

    /** Locks the audiences whose members follow a member change (any number: under the member lock). */
    async following(ids: string[]): Promise<void> {
      underMemberLock("locking the audiences that follow members");
      const missing = ids.filter((id) => held.get(id) !== "update");
      // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent, locking no rows changes nothing (it only saves a statement)
      if (missing.length > 0) hold(await repo.audiences(tx, workspaceId, missing, "update"), "update");
    },

    /**
     * As `following`, in the statement that writes them (a round trip less): the lock's query for
     * that statement to run first (membership-repo.ts applyMatches), undefined when all are held.
     * They count as held from here: the statement either takes the locks or fails the transaction.
     */
    followingInStatement(ids: string[]): Prisma.Sql | undefined {
      underMemberLock("locking the audiences that follow members");
      const missing = ids.filter((id) => held.get(id) !== "update");
      if (missing.length === 0) return undefined;
      hold(
        missing.map((id) => ({ id })),
        "update",
      );
      return repo.audiencesForUpdateSql(workspaceId, missing);
    },

    /** Locks every audience of the workspace, archived ones too (members are being deleted). */
    async all(): Promise<void> {
      underMemberLock("locking every audience");
      hold(
        (await repo.allAudiences(tx, workspaceId)).map((id) => ({ id })),
        "update",
      );
      everyAudience = true;
    },

    /** Locks the audience if its rule matches are still outdated; undefined when another process did them. */
    async ruleOutdated(id: string): Promise<Pick<AudienceRow, "id" | "filter"> | undefined> {
      underMemberLock("refreshing a rule");
      const row = await repo.ruleOutdated(tx, workspaceId, id);
      if (row) hold([row], "update");
      return row;
    },

    /** Whether this transaction holds the member lock. */
    holdsMembers: () => memberLock,
    /** Whether it holds the audience's row lock, at least in this mode. */
    holds: (id: string, mode: "update" | "share") => held.get(id) === "update" || held.get(id) === mode,
    /** Whether it holds every audience's row lock. */
    holdsAll: () => everyAudience,
  };
}

export type WriteLocks = ReturnType<typeof createWriteLocks>;
