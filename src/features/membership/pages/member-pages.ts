import type { components } from "../../../../generated/api.d.ts";
import { decodeCursor, encodeCursor } from "../../../domain/cursor.ts";
import { audienceNotFound, BadRequestError } from "../../../domain/errors.ts";
import type { Store } from "../../../platform/db/database.ts";
import { toMember } from "../member-view.ts";
import type { MemberPageRepo, PageRows } from "./member-page-repo.ts";

type Schemas = components["schemas"];

export interface MemberPageQuery {
  limit?: number | undefined;
  after?: string | undefined;
  before?: string | undefined;
  sortDirection?: "ASC" | "DESC" | undefined;
  search?: string | undefined;
}

export interface MemberPagesDeps {
  store: Pick<Store, "db" | "kind">;
  pages: MemberPageRepo;
}

/**
 * Pages of a workspace's members, or of one audience's. Cursors belong to one listing (the
 * audience, or the whole workspace) and are refused by any other.
 */
export function createMemberPages({ store, pages }: MemberPagesDeps) {
  return {
    async list(
      workspaceId: string,
      query: MemberPageQuery & { audienceId?: string | undefined },
    ): Promise<Schemas["MemberPage"]> {
      if (query.after !== undefined && query.before !== undefined) {
        throw new BadRequestError("invalid_request", "Send either after or before, not both.", [
          { pointer: "/query/before", message: "cannot be combined with after" },
        ]);
      }
      const audienceId = query.audienceId;
      // A workspace listing's cursors name the workspace, so another workspace's are refused.
      const scope = audienceId ?? `members:${workspaceId}`;
      const search = query.search?.trim() || undefined;
      const pageQuery = {
        sortDirection: query.sortDirection ?? "DESC",
        limit: query.limit ?? 30,
        after: query.after === undefined ? undefined : decodeCursor(scope, query.after, "after"),
        before: query.before === undefined ? undefined : decodeCursor(scope, query.before, "before"),
        search,
      } as const;
      const listing =
        audienceId === undefined ? pages.workspaceListing(workspaceId) : pages.audienceListing(workspaceId, audienceId);
      let page: PageRows;
      let totalCount: number;
      if (audienceId !== undefined && !search) {
        // The page and the audience's stored size come from its member bitset in one go.
        const paged = await pages.pageAudience(store.db, workspaceId, audienceId, pageQuery, {
          spellOutInSql: store.kind === "postgres",
        });
        if (paged.memberCount === null) throw audienceNotFound(audienceId);
        page = paged;
        totalCount = paged.memberCount;
      } else {
        // An unknown audience matches nobody, so its page is empty, and the answer is 404 all the same.
        const listed = await pages.pageListing(store.db, listing, pageQuery, { workspaceId, audienceId });
        if (!listed.found) throw audienceNotFound(audienceId as string);
        page = listed;
        totalCount = listed.count;
      }
      const first = page.rows[0];
      const last = page.rows.at(-1);
      return {
        totalCount,
        pageInfo: {
          hasNextPage: page.hasNextPage,
          hasPreviousPage: page.hasPreviousPage,
          startCursor: first ? encodeCursor(scope, first) : "",
          endCursor: last ? encodeCursor(scope, last) : "",
        },
        results: page.rows.map(toMember),
      };
    },
  };
}

export type MemberPages = ReturnType<typeof createMemberPages>;
