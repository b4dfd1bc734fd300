import type { Handlers } from "../../contract/handler-types.ts";
import type { RuleInsight } from "./rule-insight.ts";
import type { SizeInsight } from "./size-insight.ts";

export interface InsightHandlerDeps {
  ruleInsight: RuleInsight;
  sizeInsight: SizeInsight;
}

/** What an audience is and would be: rule changes, explanations, overlap, history. */
export function createInsightHandlers({ ruleInsight, sizeInsight }: InsightHandlerDeps) {
  return {
    previewAudienceFilterChange: (request) =>
      ruleInsight.previewChange(
        request.params.workspaceId,
        request.params.audienceId,
        request.body.filter,
        request.query?.include,
      ),
    explainMembership: (request) =>
      ruleInsight.explain(request.params.workspaceId, request.params.audienceId, request.params.memberId),
    explainDraftMembership: (request) =>
      ruleInsight.explainDraft(
        request.params.workspaceId,
        request.params.audienceId,
        request.params.memberId,
        request.body.filter,
      ),
    audienceOverlap: (request) => sizeInsight.overlap(request.params.workspaceId, request.body.audienceIds),
    audienceHistory: (request) =>
      sizeInsight.history(request.params.workspaceId, request.params.audienceId, request.query ?? {}),
  } satisfies Partial<Handlers>;
}
