/**
 * A small typed SDK for the Audience Service, on openapi-fetch and the types generated from the
 * contract (generated/api.d.ts): paths, parameters, bodies and results are checked by TypeScript.
 *
 *   const api = createAudienceClient({ baseUrl: "http://127.0.0.1:3000", apiKey: process.env.API_KEY! });
 *   const { id } = await api.POST("/v0/workspaces/{workspaceId}/audiences", {
 *     params: { path: { workspaceId } },
 *     body: { name: "Weekly digest readers" },
 *   });
 *
 * Every method resolves to the success body (undefined for 204) and rejects with an ApiError,
 * carrying the problem document, for any other status.
 */
import createClient, { type Client, type FetchOptions, type HeadersOptions, mergeHeaders } from "openapi-fetch";
import type { components, operations, paths } from "../generated/api.js";
import { type Consistency, consistency } from "./consistency.js";
import { type FeedOptions, type FeedPage, followFeed } from "./events.js";

export type { Consistency } from "./consistency.js";
export type { Event, EventOf, EventType, FeedOptions, FeedPage, WebhookEvent } from "./events.js";
export {
  FILTER_OPERATORS,
  type FilterFieldKind,
  type FilterOperatorOf,
} from "./generated/filter-operators.js";
export { verifyWebhook, WebhookVerificationError } from "./webhooks.js";
export type { components, operations, paths };
export type Problem = components["schemas"]["Problem"];
export type ProblemCode = Problem["code"];
export type Member = components["schemas"]["Member"];
export type MemberPage = components["schemas"]["MemberPage"];
/** An activity to track: `{id?, memberId | email, type, occurredAt?, properties?}`. */
export type ActivityInput = components["schemas"]["ActivityInput"];
/** What an ingest did with its entries: `{accepted, duplicates, expired, createdMembers}`. */
export type TrackResult = components["schemas"]["IngestActivitiesResult"];

export interface TrackOptions {
  /** Sent as Idempotency-Key (a retried id is never stored twice anyway). */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

type HttpMethod = "get" | "put" | "post" | "delete" | "patch";
/** The paths that have an operation for this method. */
export type PathsWith<M extends HttpMethod> = {
  [P in keyof paths]: paths[P] extends Record<M, object> ? P : never;
}[keyof paths];
type OperationAt<P extends keyof paths, M extends HttpMethod> = paths[P] extends Record<M, infer Op> ? Op : never;

type RequiredKeysOf<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];
/** params (path, query) and body of one operation, plus fetch options such as headers or signal. */
export type CallInit<Op> = Omit<FetchOptions<Op>, "parseAs" | "baseUrl" | "fetch" | "middleware">;
/** The init argument is optional exactly when the operation needs no path parameter and no body. */
type InitArgs<Op> = RequiredKeysOf<CallInit<Op>> extends never ? [init?: CallInit<Op>] : [init: CallInit<Op>];

type SuccessStatus = 200 | 201 | 202 | 203 | 204 | 206;
type JsonOf<R> = R extends { content: { "application/json": infer C } } ? C : undefined;
/** The success body of an operation (undefined when it has none, as for 204). */
export type ResultOf<Op> = Op extends { responses: infer R }
  ? { [S in keyof R & SuccessStatus]: JsonOf<R[S]> }[keyof R & SuccessStatus]
  : never;

type Call<M extends HttpMethod> = <P extends PathsWith<M>>(
  path: P,
  ...init: InitArgs<OperationAt<P, M>>
) => Promise<ResultOf<OperationAt<P, M>>>;

type Page = { pageInfo: components["schemas"]["PageInfo"]; results: unknown[] };
/** The GET paths that answer one page of a keyset-paginated listing (pageInfo + results). */
export type PagedPath = {
  [P in PathsWith<"get">]: ResultOf<OperationAt<P, "get">> extends Page ? P : never;
}[PathsWith<"get">];
type ItemOf<T> = T extends { results: Array<infer I> } ? I : never;

export interface AudienceClientOptions {
  /** Where the API is, e.g. http://127.0.0.1:3000 (no /v0: the paths carry it). */
  baseUrl: string;
  /** A workspace API key (ak_…), or the server's admin token for the admin operations. */
  apiKey: string;
  /** Extra headers sent with every request. */
  headers?: HeadersOptions;
  /** Another fetch implementation (defaults to globalThis.fetch). */
  fetch?: (input: Request) => Promise<Response>;
}

export interface AudienceClient {
  GET: Call<"get">;
  POST: Call<"post">;
  PUT: Call<"put">;
  PATCH: Call<"patch">;
  DELETE: Call<"delete">;
  /**
   * Walks a member listing page by page, following endCursor (or startCursor, when the init's
   * query starts from a `before` cursor) until the last page. Every other query parameter (limit,
   * sortDirection, search, …) is kept. Stops early if a page does not move the cursor forward,
   * as a mock answering the same example page every time would.
   */
  pages<P extends PagedPath>(
    path: P,
    ...init: InitArgs<OperationAt<P, "get">>
  ): AsyncGenerator<ResultOf<OperationAt<P, "get">>, void, undefined>;
  /** Every member of a listing across all its pages, page after page as pages() walks them. */
  members<P extends PagedPath>(
    path: P,
    ...init: InitArgs<OperationAt<P, "get">>
  ): AsyncGenerator<ItemOf<ResultOf<OperationAt<P, "get">>>, void, undefined>;
  /**
   * Follows a workspace's event feed from a cursor, page by page in sequence order (see
   * FeedOptions): at the head it polls for more until `signal` aborts, or stops with follow: false.
   */
  feed(options: FeedOptions): AsyncGenerator<FeedPage, void, undefined>;
  /**
   * Records what members did (ingestActivities): one activity or up to 10,000 in one request,
   * all or nothing (a bad entry throws an ApiError whose problem points at it, and nothing is
   * stored). Resolves to how every entry was counted.
   */
  track(workspaceId: string, activities: ActivityInput | ActivityInput[], options?: TrackOptions): Promise<TrackResult>;
  /**
   * Read-your-writes with a server that reads from replicas: the last Consistency-Token this
   * client received, sent with each of its requests by itself.
   */
  consistency: Consistency;
  /** The underlying openapi-fetch client, for full responses ({ data, error, response }). */
  raw: Client<paths>;
}

/** A response other than a success: its status and, when the body is one, its problem document. */
export class ApiError extends Error {
  override readonly name = "ApiError";
  readonly status: number;
  /** The RFC 9457 problem document the server answered with; undefined if the body was not one. */
  readonly problem: Problem | undefined;
  /** The problem's stable machine-readable code, e.g. "audience_name_taken". */
  readonly code: ProblemCode | undefined;
  /** The parsed body when it was not a problem document (or its text when it was not JSON). */
  readonly body: unknown;
  readonly response: Response;

  constructor(response: Response, body: unknown) {
    const problem = isProblem(body) ? body : undefined;
    super(
      problem
        ? `${response.status} ${problem.code}: ${problem.detail ?? problem.title}`
        : `${response.status} ${response.statusText || "error"}`,
    );
    this.status = response.status;
    this.problem = problem;
    this.code = problem?.code;
    this.body = body;
    this.response = response;
  }
}

function isProblem(body: unknown): body is Problem {
  const b = body as Partial<Problem> | null | undefined;
  return typeof b === "object" && b !== null && typeof b.code === "string" && typeof b.status === "number";
}

type LooseInit = { params?: { query?: Record<string, unknown> } & Record<string, unknown> } & Record<string, unknown>;
type LooseRequest = (
  method: string,
  path: string,
  init?: LooseInit,
) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

export function createAudienceClient({ baseUrl, apiKey, headers, fetch }: AudienceClientOptions): AudienceClient {
  const raw = createClient<paths>({
    baseUrl,
    ...(fetch ? { fetch } : {}),
    headers: mergeHeaders(headers, { authorization: `Bearer ${apiKey}` }),
  });
  const tokens = consistency();
  raw.use(tokens.middleware);
  const request = raw.request as unknown as LooseRequest;
  const send = async (method: HttpMethod, path: string, init?: LooseInit): Promise<any> => {
    const { data, error, response } = await request(method, path, init);
    if (!response.ok) throw new ApiError(response, error);
    return data;
  };
  const call = <M extends HttpMethod>(method: M) =>
    ((path: string, init?: LooseInit) => send(method, path, init)) as unknown as Call<M>;

  async function* pages(path: string, init: LooseInit = {}): AsyncGenerator<Page, void, undefined> {
    const query = { ...init.params?.query };
    const backward = query.before !== undefined;
    for (;;) {
      const page: Page = await send("get", path, { ...init, params: { ...init.params, query } });
      yield page;
      const more = backward ? page.pageInfo.hasPreviousPage : page.pageInfo.hasNextPage;
      const cursor = backward ? page.pageInfo.startCursor : page.pageInfo.endCursor;
      const key = backward ? "before" : "after";
      if (!more || cursor === "" || cursor === query[key]) return;
      query[key] = cursor;
    }
  }
  async function* members(path: string, init?: LooseInit): AsyncGenerator<unknown, void, undefined> {
    for await (const page of pages(path, init)) yield* page.results;
  }

  return {
    GET: call("get"),
    POST: call("post"),
    PUT: call("put"),
    PATCH: call("patch"),
    DELETE: call("delete"),
    pages: pages as unknown as AudienceClient["pages"],
    members: members as unknown as AudienceClient["members"],
    feed: (options) =>
      followFeed(
        (query) =>
          send("get", "/v0/workspaces/{workspaceId}/events", {
            params: { path: { workspaceId: options.workspaceId }, query },
          }),
        options,
      ),
    track: (workspaceId, activities, options = {}) =>
      send("post", "/v0/workspaces/{workspaceId}/activities", {
        params: { path: { workspaceId } },
        body: { activities: Array.isArray(activities) ? activities : [activities] },
        ...(options.idempotencyKey === undefined ? {} : { headers: { "idempotency-key": options.idempotencyKey } }),
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      }),
    consistency: {
      track: tokens.track,
      get token() {
        return tokens.token;
      },
    },
    raw,
  };
}
