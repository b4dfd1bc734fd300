import type { Readable } from "node:stream";
import type { FastifyReply, FastifyRequest } from "fastify";
import Negotiator from "negotiator";
import type { operations } from "../../../generated/api.d.ts";

/** What a client sent of a member listing's query (listMembers' parameters; audienceId for an audience's). */
export type MemberFileQuery = Partial<NonNullable<operations["listMembers"]["parameters"]["query"]>>;

/** The file formats a member listing can answer besides its JSON page. */
export type FileFormat = "csv" | "ndjson";

/**
 * Every member of a listing as a file: what a listing operation's handler is given by the
 * composition root (the exports feature's open()). The query holds only what the client sent.
 */
export type OpenMemberFile = (
  workspaceId: string,
  format: FileFormat,
  query: MemberFileQuery,
  /** The API key the request was authenticated with: exports are limited per key. */
  keyId: string,
  /** An audience's members at an earlier instant: the bound its membership record is read before. */
  asOf?: Date,
) => Promise<Readable>;

/** Member files for the listing handlers (the exports feature). */
export interface MemberFiles {
  open: OpenMemberFile;
  /** How long a client may take nothing of its file before it is disconnected. */
  writeTimeoutMs: number;
}

/** The API key a request was authenticated with (the security handler set it). */
export const keyOf = (request: { principal?: { keyId: string } }) => request.principal?.keyId ?? "";

/** What a member listing can answer, JSON first: it is what no Accept, or * / *, gets. */
const OFFERED = ["application/json", "text/csv", "application/x-ndjson"];

/** Accept headers that Negotiator answers with application/json, kept from it. */
const PLAIN_JSON = new Set(["", "*/*", "application/json"]);

const FILES: Record<FileFormat, { type: string; extension: string }> = {
  csv: { type: "text/csv; charset=utf-8", extension: "csv" },
  ndjson: { type: "application/x-ndjson", extension: "ndjson" },
};

/**
 * The file format the request's Accept header prefers (q-values weighed), or undefined for the
 * JSON page: also when Accept names none of the offered types. The answer depends on Accept,
 * which caches are told.
 */
export function fileFormat(request: FastifyRequest, reply: FastifyReply): FileFormat | undefined {
  reply.header("vary", "Accept");
  // What most clients send asks for the JSON page; weighing it cost a page request 5–10 µs.
  const accept = request.headers.accept;
  if (accept === undefined || PLAIN_JSON.has(accept)) return undefined;
  const chosen = new Negotiator(request).mediaType(OFFERED);
  if (chosen === "text/csv") return "csv";
  if (chosen === "application/x-ndjson") return "ndjson";
  return undefined;
}

/**
 * The query parameters the client sent. Validation fills in a page's defaults (limit 30,
 * sortDirection DESC), which a file must not see: its order defaults the other way, and a limit
 * it did not get must not be refused.
 */
export function sentQuery<Q extends object>(request: { url: string; query: Q }): Partial<Q> {
  const sent = new URL(request.url, "http://localhost").searchParams;
  return Object.fromEntries(Object.entries(request.query).filter(([name]) => sent.has(name))) as Partial<Q>;
}

/**
 * Answers with the file, to be saved as `name` with the format's extension. The export itself
 * cuts a file whose client takes nothing for writeTimeoutMs, and gives its place back then. The
 * socket's idle timer closes the connection of a client that stalls on the file's last bytes,
 * after the file has closed: Node re-arms that timer once when a write was partly taken, so it
 * may take up to twice writeTimeoutMs, but by then the connection holds no place, only its buffers.
 */
export function sendFile(
  reply: FastifyReply,
  format: FileFormat,
  name: string,
  file: Readable,
  writeTimeoutMs: number,
): Readable {
  const { type, extension } = FILES[format];
  reply.type(type).header("content-disposition", `attachment; filename="${name}.${extension}"`);
  reply.raw.setTimeout(writeTimeoutMs, () => {
    reply.log.warn({ writeTimeoutMs }, "export client took nothing within the write timeout: disconnected");
    reply.raw.destroy();
  });
  return file;
}
