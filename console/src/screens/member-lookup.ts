import { useQueries } from "@tanstack/react-query";
import { useApi } from "../api.tsx";

export interface LookedUp {
  /** The member's id: the text itself unless it is an e-mail address some member has. */
  id: string | undefined;
  /** The member's primary e-mail address, once read. */
  email: string | null | undefined;
  /** The text is an e-mail address no member has (as primary or alternative address). */
  noSuchEmail: boolean;
  /** The id is known to be the one to use: not still being looked up by address. */
  ready: boolean;
}

/**
 * A member named as a person names one: by id or by e-mail address. Text with an `@` is looked
 * up with listMembers' search (which matches parts of addresses, so the answer is narrowed here to
 * an address equal to the text, case aside); a member whose id is that text still counts when no
 * address matches. The member is then read for its primary address, to show it.
 */
export function useMemberLookup(text: string): LookedUp {
  const { $api, workspaceId } = useApi();
  const looksLikeEmail = text.includes("@");
  const search = $api.useQuery(
    "get",
    "/v0/workspaces/{workspaceId}/members",
    { params: { path: { workspaceId }, query: { search: text, limit: 100 } } },
    { enabled: looksLikeEmail },
  );
  const wanted = text.toLowerCase();
  const byEmail = search.data?.results.find(
    (m) => m.email?.toLowerCase() === wanted || m.alternativeEmails.some((e) => e.toLowerCase() === wanted),
  );
  const id = !looksLikeEmail ? text : search.data ? (byEmail?.id ?? text) : undefined;
  const member = $api.useQuery(
    "get",
    "/v0/workspaces/{workspaceId}/members/{memberId}",
    { params: { path: { workspaceId, memberId: id ?? "" } } },
    { enabled: id !== undefined && byEmail === undefined, retry: false },
  );
  return {
    id,
    email: byEmail ? byEmail.email : member.data?.email,
    noSuchEmail: looksLikeEmail && search.data !== undefined && byEmail === undefined && member.isError,
    ready: !looksLikeEmail || byEmail !== undefined || member.isSuccess,
  };
}

/** The most members a screen reads one by one to name them: beyond it they stay counted, not named. */
const MOST_NAMED = 50;

/**
 * The primary e-mail addresses of a few members, by id (null: none; absent: not read, or no such
 * member now). The API has no read of many members by id, so each is read alone (getMember, kept
 * in the query cache): only the first MOST_NAMED ids are.
 */
export function useMemberEmails(ids: readonly string[]): Map<string, string | null> {
  const { $api, workspaceId } = useApi();
  const wanted = [...new Set(ids)].slice(0, MOST_NAMED);
  const answers = useQueries({
    queries: wanted.map((memberId) => ({
      ...$api.queryOptions("get", "/v0/workspaces/{workspaceId}/members/{memberId}", {
        params: { path: { workspaceId, memberId } },
      }),
      retry: false,
      staleTime: 60_000,
    })),
  });
  const emails = new Map<string, string | null>();
  answers.forEach((answer, i) => {
    const id = wanted[i];
    if (id !== undefined && answer.data) emails.set(id, answer.data.email);
  });
  return emails;
}
