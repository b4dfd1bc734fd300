import type { components } from "../../../generated/api.d.ts";
import { audienceArchived, audienceNotFound, memberNotFound } from "../../domain/errors.ts";
import type { FieldTypes } from "../../domain/field-types.ts";
import type { Store } from "../../platform/db/database.ts";
import type { AudienceRepo } from "../membership/audience-repo.ts";
import type { ActivityCondition } from "../membership/rules/activity-condition.ts";
import type { ActivityRuleRepo } from "../membership/rules/activity-rule-repo.ts";
import type { FieldTypeRepo } from "../membership/rules/field-type-repo.ts";
import { activityConditionsOf, type Filter, parseFilter } from "../membership/rules/filter.ts";
import type { FilterCostCheck } from "../membership/rules/filter-cost.ts";
import { explainFilter, filterWarnings } from "../membership/rules/filter-explain.ts";
import type { ExplainedMemberRow, RuleInsightRepo } from "../membership/rules/rule-insight-repo.ts";

type Schemas = components["schemas"];

export interface RuleInsightDeps {
  store: Pick<Store, "db">;
  audiences: Pick<AudienceRepo, "find">;
  fieldTypes: Pick<FieldTypeRepo, "types" | "unheld">;
  insight: Pick<RuleInsightRepo, "filterChange" | "explained">;
  /** Refuses a rule of this audience as saving it would: audiences it names, cycles, chains. */
  checkRule(workspaceId: string, audienceId: string, filter: Filter | null): Promise<void>;
  /** Refuses a filter too costly to evaluate over the workspace (filter-cost.ts). */
  checkCost: FilterCostCheck;
  /** What activity conditions count of the member explained (activity-rule-repo.ts). */
  activities: Pick<ActivityRuleRepo, "tallies">;
  /** ACTIVITY_RETENTION_DAYS: activity conditions' windows stay within it, and count no further back. */
  activityRetentionDays?: number | undefined;
}

/** What a rule would do and why a member is in: evaluated, never saved. */
export function createRuleInsight(deps: RuleInsightDeps) {
  const { store, audiences, fieldTypes, insight, checkRule, checkCost, activityRetentionDays } = deps;

  /** A rule not saved yet, parsed and refused as saving it would refuse it. */
  async function draftOf(workspaceId: string, audienceId: string, rawFilter: unknown) {
    const types = await fieldTypes.types(store.db, workspaceId);
    const filter = rawFilter === null ? null : parseFilter(rawFilter, { types, activityRetentionDays });
    const audience = await audiences.find(store.db, workspaceId, audienceId);
    if (!audience) throw audienceNotFound(audienceId);
    if (audience.isArchived) throw audienceArchived(audienceId, audience.name);
    await checkRule(workspaceId, audienceId, filter);
    return { types, filter };
  }

  /** What each node of `filter` says of the member, its activity conditions counted for it alone. */
  async function explanationOf(
    workspaceId: string,
    filter: Filter | null,
    types: FieldTypes,
    row: ExplainedMemberRow,
  ): Promise<Schemas["MembershipExplanation"]["rule"]> {
    if (filter === null) return null;
    const inAudiences = new Set(row.inAudiences);
    const now = Date.now();
    // What the rule's activity conditions count of the member, read only when it has some.
    const conditions = activityConditionsOf(filter);
    const tallies = await deps.activities.tallies(store.db, workspaceId, [row.seq], conditions, {
      now,
      activityRetentionDays,
    });
    const mine = tallies.get(row.seq) ?? [];
    const context = {
      types,
      now,
      inAudience: (id: string) => inAudiences.has(id),
      activity: (c: ActivityCondition) => mine[conditions.indexOf(c)] ?? { count: 0, lastAt: null },
    };
    return explainFilter(filter, row, row.createdAt, context);
  }

  return {
    /** The effect of saving `rawFilter` as the audience's rule, refused as setFilter would refuse it. */
    async previewChange(
      workspaceId: string,
      audienceId: string,
      rawFilter: unknown,
      include?: "member",
    ): Promise<Schemas["FilterChangePreview"]> {
      const { types, filter } = await draftOf(workspaceId, audienceId, rawFilter);
      await checkCost(store.db, workspaceId, filter, types, "dryRun");
      const change = await insight.filterChange(store.db, workspaceId, audienceId, filter, {
        types,
        now: Date.now(),
        workspaceId,
        activityRetentionDays,
      });
      // A key nobody holds counts 0 without a word otherwise: said beside the answer, never refused.
      const warnings = await filterWarnings(filter, (keys) => fieldTypes.unheld(store.db, workspaceId, keys));
      const side = (count: number, sample: string[], emails: (string | null)[]): Schemas["MemberSample"] =>
        include === "member"
          ? { count, sample, members: sample.map((id, i) => ({ id, email: emails[i] ?? null })) }
          : { count, sample };
      return {
        memberCount: change.memberCount,
        entering: side(change.entering, change.enteringSample, change.enteringEmails),
        leaving: side(change.leaving, change.leavingSample, change.leavingEmails),
        ...(warnings.length > 0 ? { warnings } : {}),
      };
    },

    /** Whether the member is in the audience, by hand or by rule, and what each node of the rule says. */
    async explain(
      workspaceId: string,
      audienceId: string,
      memberId: string,
    ): Promise<Schemas["MembershipExplanation"]> {
      // The audience, its rule, the workspace's types and the member, read together.
      const explained = await insight.explained(store.db, workspaceId, audienceId, memberId);
      if (!explained) throw audienceNotFound(audienceId);
      const { filter, types, member: row } = explained;
      if (!row) throw memberNotFound(memberId);
      const rule = await explanationOf(workspaceId, filter, types, row);
      return {
        isMember: row.isMember,
        reason: !row.isMember ? null : row.included ? "manual" : "rule",
        manual: row.included ? "include" : row.excluded ? "exclude" : null,
        rule,
      };
    },

    /**
     * The explanation of `rawFilter` as the audience's rule, not saved: refused as a dry run
     * refuses it, and the member's decisions by hand kept as saving would keep them.
     */
    async explainDraft(
      workspaceId: string,
      audienceId: string,
      memberId: string,
      rawFilter: unknown,
    ): Promise<Schemas["MembershipExplanation"]> {
      const { filter } = await draftOf(workspaceId, audienceId, rawFilter);
      const explained = await insight.explained(store.db, workspaceId, audienceId, memberId, { filter });
      if (!explained) throw audienceNotFound(audienceId);
      const row = explained.member;
      if (!row) throw memberNotFound(memberId);
      const rule = await explanationOf(workspaceId, filter, explained.types, row);
      const isMember = row.included || (rule?.matches === true && !row.excluded);
      return {
        isMember,
        reason: !isMember ? null : row.included ? "manual" : "rule",
        manual: row.included ? "include" : row.excluded ? "exclude" : null,
        rule,
      };
    },
  };
}

export type RuleInsight = ReturnType<typeof createRuleInsight>;
