import type { components } from "../../../generated/api.d.ts";

type Schemas = components["schemas"];

/** What a rule would do and why a member is in: evaluated, never saved. */
export function createRuleInsight() {
  return {
    async previewChange(
      _workspaceId: string,
      _audienceId: string,
      _filter: unknown,
    ): Promise<Schemas["FilterChangePreview"]> {
      throw new Error("not built yet");
    },
    async explain(
      _workspaceId: string,
      _audienceId: string,
      _memberId: string,
    ): Promise<Schemas["MembershipExplanation"]> {
      throw new Error("not built yet");
    },
  };
}

export type RuleInsight = ReturnType<typeof createRuleInsight>;
