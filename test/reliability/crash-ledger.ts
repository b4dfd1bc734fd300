import { listAudienceMembers, send } from "./server-process.ts";

/**
 * Every request the crash test sent, what the client saw of it, and what the store was later
 * found to hold. Member ids are unique per request, so each add's effect is identifiable.
 */
type Outcome = "full" | "none";
interface Sent {
  iteration: number;
  /** A base set added (and acknowledged) before the stream. */
  setup?: boolean;
  /** Logical clock (ledger.tick) when it was sent and when its 2xx answer arrived. */
  sentAt: number;
  ackedAt?: number;
  /** The HTTP status, when an answer arrived before the kill. */
  status?: number;
  /** Why no answer arrived (the connection died with the process), or a contract violation. */
  failure?: string;
  /** What the first verification after it found; later crashes must not change it. */
  observed?: Outcome;
}
export interface AddRequest extends Sent {
  kind: "add";
  audienceId: string;
  ids: string[];
  withData: boolean;
}
export interface MergeRequest extends Sent {
  kind: "merge";
  name: string;
  sources: [string, string];
  mergedId?: string;
}
export type LedgerRequest = AddRequest | MergeRequest;

export const emailOf = (id: string) => `${id.toLowerCase()}@crash.test`;

export class Ledger {
  clock = 0;
  readonly requests: LedgerRequest[] = [];
  /** The audiences the adds go to (merge results are found by name). */
  readonly targets: string[] = [];
  readonly ownerOf = new Map<string, AddRequest>();

  tick(): number {
    return ++this.clock;
  }

  record(request: LedgerRequest): void {
    this.requests.push(request);
    if (request.kind === "add") for (const id of request.ids) this.ownerOf.set(id, request);
  }

  adds(): AddRequest[] {
    return this.requests.filter((r): r is AddRequest => r.kind === "add");
  }

  merges(): MergeRequest[] {
    return this.requests.filter((r): r is MergeRequest => r.kind === "merge");
  }
}

/** Sends one ledger request and records what the client saw. Never throws. */
export async function execute(
  ledger: Ledger,
  server: { baseUrl: string },
  apiKey: string,
  workspacePath: string,
  request: LedgerRequest,
): Promise<void> {
  ledger.record(request);
  request.sentAt = ledger.tick();
  try {
    const reply =
      request.kind === "merge"
        ? await send(server, apiKey, "POST", `${workspacePath}/audiences/merge`, {
            name: request.name,
            audienceIds: request.sources,
          })
        : await send(
            server,
            apiKey,
            "POST",
            `${workspacePath}/audiences/${request.audienceId}/members`,
            request.withData
              ? { members: request.ids.map((id) => ({ id, email: emailOf(id), fields: { batch: id.split("_")[0] } })) }
              : { memberIds: request.ids },
          );
    request.status = reply.status;
    if (reply.status < 200 || reply.status > 299) return;
    request.ackedAt = ledger.tick();
    if (request.kind === "merge") request.mergedId = reply.body.id;
    else if (reply.body.added !== request.ids.length || reply.body.created !== request.ids.length) {
      request.failure = `acknowledged with ${JSON.stringify(reply.body)} for ${request.ids.length} new ids`;
    }
  } catch (error) {
    request.failure = (error as Error).message;
  }
}

export interface Verification {
  lost: number;
  partial: number;
  /** Human-readable descriptions of every violation (lost and partial ones included). */
  problems: string[];
}

const describe = (r: LedgerRequest) =>
  r.kind === "add"
    ? `add #${r.sentAt} (iteration ${r.iteration}, ${r.ids.length} ${r.withData ? "members with data" : "memberIds"} to ${r.audienceId}, ${r.ackedAt ? `acknowledged ${r.status}` : `unacknowledged: ${r.failure ?? r.status}`})`
    : `merge #${r.sentAt} "${r.name}" of ${r.sources.join("+")} (${r.ackedAt ? `acknowledged ${r.status} ${r.mergedId}` : `unacknowledged: ${r.failure ?? r.status}`})`;

/**
 * Reads everything back through the API and checks the ledger against it: acknowledged (or
 * previously observed) requests are fully present, every request is all-or-nothing, merges
 * hold exactly a union of whole requests, and every totalCount matches the listing.
 */
export async function verify(
  ledger: Ledger,
  server: { baseUrl: string },
  apiKey: string,
  workspacePath: string,
): Promise<Verification> {
  const result: Verification = { lost: 0, partial: 0, problems: [] };
  const problem = (text: string) => result.problems.push(text);
  const audiences = await send(server, apiKey, "GET", `${workspacePath}/audiences?includeArchived=true`);
  const byName = new Map<string, string>(
    (audiences.body.results as { id: string; name: string }[]).map((a) => [a.name, a.id]),
  );
  const listings = new Map<string, Map<string, string | null>>();
  const membersOf = async (audienceId: string) => {
    let members = listings.get(audienceId);
    if (!members) {
      const listing = await listAudienceMembers(server, apiKey, `${workspacePath}/audiences/${audienceId}/members`);
      members = listing.members;
      listings.set(audienceId, members);
      if (listing.totalCounts.length !== 1 || listing.totalCounts[0] !== members.size) {
        problem(`audience ${audienceId}: totalCount ${listing.totalCounts.join("/")} but ${members.size} listed`);
      }
    }
    return members;
  };
  const settle = (request: LedgerRequest, outcome: Outcome) => {
    if (outcome !== "full" && (request.ackedAt !== undefined || request.observed === "full")) {
      result.lost++;
      problem(
        `LOST: ${describe(request)} is absent${request.observed === "full" ? " (it was present after an earlier restart)" : ""}`,
      );
    }
    if (outcome === "full" && request.observed === "none") problem(`${describe(request)} was absent, now present`);
    if (outcome === "full" && request.status !== undefined && request.ackedAt === undefined) {
      problem(`${describe(request)} was refused with ${request.status} but is present`);
    }
    request.observed = outcome;
  };
  /** How many of the add's ids the member set holds: 0 or all, never in between. */
  const presence = (request: AddRequest, members: Map<string, string | null>, where: string): Outcome | undefined => {
    const present = request.ids.filter((id) => members.has(id)).length;
    if (present === 0) return "none";
    if (present === request.ids.length) return "full";
    result.partial++;
    problem(`PARTIAL: ${where} holds ${present} of the ${request.ids.length} ids of ${describe(request)}`);
    return undefined;
  };

  for (const add of ledger.adds()) {
    const members = await membersOf(add.audienceId);
    const outcome = presence(add, members, `audience ${add.audienceId}`);
    if (outcome === undefined) continue;
    settle(add, outcome);
    if (outcome === "full" && add.withData) {
      const wrong = add.ids.filter((id) => members.get(id) !== emailOf(id));
      if (wrong.length > 0) problem(`${describe(add)}: ${wrong.length} members lack their e-mail, e.g. ${wrong[0]}`);
    }
  }
  for (const target of ledger.targets) {
    for (const id of (await membersOf(target)).keys()) {
      if (ledger.ownerOf.get(id)?.audienceId !== target) problem(`audience ${target} holds ${id}, never added to it`);
    }
  }

  for (const merge of ledger.merges()) {
    const mergedId = byName.get(merge.name);
    if (merge.ackedAt !== undefined && mergedId !== merge.mergedId) {
      problem(`merge "${merge.name}" answered ${merge.mergedId} but the audience by that name is ${mergedId}`);
    }
    settle(merge, mergedId === undefined ? "none" : "full");
    if (mergedId === undefined) continue;
    const merged = await membersOf(mergedId);
    for (const add of ledger.adds().filter((a) => merge.sources.includes(a.audienceId))) {
      const outcome = presence(add, merged, `merged audience "${merge.name}"`);
      if (outcome === "full" && add.observed !== "full")
        problem(`"${merge.name}" holds ${describe(add)}, absent from its audience`);
      if (outcome === "none" && add.ackedAt !== undefined && add.ackedAt < merge.sentAt) {
        result.lost++;
        problem(`LOST: "${merge.name}", sent after ${describe(add)} was acknowledged, lacks it`);
      }
    }
    for (const id of merged.keys()) {
      const owner = ledger.ownerOf.get(id)?.audienceId;
      if (owner === undefined || !merge.sources.includes(owner))
        problem(`"${merge.name}" holds ${id}, in neither source`);
    }
  }
  return result;
}
