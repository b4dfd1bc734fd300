import { useApi } from "../api.tsx";
import type { Filter } from "../rules/rule-state.ts";
import { describeNode, nodeAt } from "../rules/rule-text.ts";
import { ErrorNote } from "../ui/error-note.tsx";
import { MemberName } from "../ui/member-name.tsx";
import { useMemberLookup } from "./member-lookup.ts";

/**
 * Why a member is in the audience or not: by hand, or each node of the rule with what it read of
 * the member. `member` is its id or one of its e-mail addresses; the title names it by address.
 */
export function Explanation(props: {
  audienceId: string;
  member: string;
  draft?: { filter: Filter | null } | undefined;
}) {
  const { audienceId, member, draft } = props;
  const { $api, workspaceId } = useApi();
  const path = { workspaceId, audienceId };
  const lookedUp = useMemberLookup(member);
  const memberId = lookedUp.id ?? "";
  const EXPLANATION = "/v0/workspaces/{workspaceId}/audiences/{audienceId}/members/{memberId}/explanation";
  const ofSaved = $api.useQuery(
    "get",
    EXPLANATION,
    { params: { path: { ...path, memberId } } },
    {
      enabled: lookedUp.ready && !draft,
    },
  );
  // A draft (a member the dry run sampled) is explained as if saved, by the API (explainDraftMembership).
  const ofDraft = $api.useQuery(
    "post",
    EXPLANATION,
    { params: { path: { ...path, memberId } }, body: { filter: draft?.filter ?? null } },
    { enabled: lookedUp.ready && draft !== undefined, retry: false },
  );
  const explanation = draft ? ofDraft : ofSaved;
  const saved = $api.useQuery("get", "/v0/workspaces/{workspaceId}/audiences/{audienceId}/filter", {
    params: { path },
  });
  const audiences = $api.useQuery("get", "/v0/workspaces/{workspaceId}/audiences", {
    params: { path: { workspaceId } },
  });
  const names = new Map((audiences.data?.results ?? []).map((audience) => [audience.id, audience.name]));
  const data = explanation.data;
  return (
    <section className="panel" aria-labelledby="explanation-heading">
      <h2 id="explanation-heading">
        Why <MemberName id={lookedUp.id ?? member} email={lookedUp.email} />
        {draft && ", with the rule not saved yet"}
      </h2>
      {lookedUp.noSuchEmail ? (
        <p className="error" role="alert">
          No member has the e-mail address {member}.
        </p>
      ) : (
        <ErrorNote error={explanation.error} />
      )}
      {data && (
        <>
          <p className={data.isMember ? "good" : "bad"}>
            {draft && "If the rule were saved: "}
            {data.isMember
              ? `In the audience, ${data.reason === "manual" ? "added by hand" : "by its rule"}.`
              : data.manual === "exclude"
                ? "Not in the audience: removed by hand, whatever the rule says."
                : "Not in the audience."}
          </p>
          {data.rule && (
            <ul className="explanation">
              {data.rule.nodes.map((node) => {
                const rule = draft ? draft.filter : saved.data?.filter;
                const at = rule ? nodeAt(rule, node.pointer) : undefined;
                const depth = node.pointer === "" ? 0 : node.pointer.split("/").length / 2;
                return (
                  <li key={node.pointer} className={`depth-${Math.min(depth, 4)}`}>
                    <span className={node.matches ? "good" : "bad"}>{node.matches ? "✓" : "✗"}</span>{" "}
                    {node.pointer === "" ? "The rule" : at ? describeNode(at, names) : node.pointer}
                    {node.value !== null && <span className="muted"> — {readText(at, node.value)}</span>}
                  </li>
                );
              })}
            </ul>
          )}
          {!data.rule && <p className="muted">{draft ? "The draft has no rule." : "The audience has no rule."}</p>}
        </>
      )}
    </section>
  );
}

/**
 * What a condition read of the member, in words: membership for an audience condition, how often
 * and when last for an activity condition, else the value.
 */
function readText(
  node: Filter | undefined,
  value: string | string[] | boolean | { count: number; lastAt: string | null },
): string {
  if (node && "field" in node && node.field === "audience" && typeof value === "boolean") {
    return value ? "is in it" : "is not in it";
  }
  if (typeof value === "object" && !Array.isArray(value)) {
    const times = `${value.count.toLocaleString()} ${value.count === 1 ? "time" : "times"}`;
    return value.lastAt === null
      ? "never, in the window"
      : `${times}, last on ${new Date(value.lastAt).toLocaleString()}`;
  }
  return `read: ${Array.isArray(value) ? value.join(", ") : String(value)}`;
}
