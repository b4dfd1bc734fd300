// The membership rule as docs/rules.md states it (the rule of membership, the filter language,
// conditions on other audiences), applied step by step, sharing no code with the service: rules
// are judged by the reference evaluator, audience conditions read the model's own members of the
// named audience, and a write's changes are the differences it makes.
import { type Filter, unionFilter } from "../../src/features/membership/rules/filter.ts";
import { type PlainActivity, type PlainMember, referenceMatches } from "../support/reference-filter.ts";
import { DAY, type Data, namedAudiences, RETENTION_DAYS, RULES, START, type Step, TYPES } from "./membership-steps.ts";

export type Seen = { reason: string; audienceId: string; entered: string[]; left: string[] }[];

interface ModelAudience {
  rule: Filter | null;
  include: Set<string>;
  exclude: Set<string>;
}

export class RuleModel {
  readonly members = new Map<string, PlainMember>();
  readonly audiences = new Map<string, ModelAudience>();
  /** The time relative-time conditions are evaluated at. */
  now = START;
  /** What each member did. */
  readonly activities = new Map<string, PlainActivity[]>();

  /** The reference evaluator's context beside audience conditions: types, time, activities. */
  private context() {
    return {
      types: TYPES,
      now: this.now,
      retentionDays: RETENTION_DAYS,
      activities: (m: PlainMember) => this.activities.get(m.id) ?? [],
    };
  }

  /**
   * Every audience's members: include ∨ (rule ∧ ¬exclude), an audience condition reading the
   * members of the audience it names (computed first: rules never form cycles).
   */
  memberships(): Map<string, Set<string>> {
    const done = new Map<string, Set<string>>();
    const busy = new Set<string>();
    const of = (audienceId: string): Set<string> => {
      const known = done.get(audienceId);
      if (known) return known;
      if (busy.has(audienceId)) throw new Error(`the model's rules form a cycle through ${audienceId}`);
      busy.add(audienceId);
      const { rule, include, exclude } = this.audience(audienceId);
      const context = { ...this.context(), inAudience: (named: string, m: PlainMember) => of(named).has(m.id) };
      const ids = [...this.members.values()]
        .filter((m) => include.has(m.id) || (referenceMatches(rule, m, context) && !exclude.has(m.id)))
        .map((m) => m.id);
      done.set(audienceId, new Set(ids));
      return done.get(audienceId) as Set<string>;
    };
    for (const id of this.audiences.keys()) of(id);
    return done;
  }

  membersOf(audienceId: string): Set<string> {
    return this.memberships().get(audienceId) as Set<string>;
  }

  private audience(audienceId: string): ModelAudience {
    const found = this.audiences.get(audienceId);
    if (!found) throw new Error(`the model has no audience ${audienceId}`);
    return found;
  }

  /** Applies a step; returns each audience whose members it changed, as the feed must tell it. */
  apply(step: Step, mergedId: string): Seen {
    const before = this.memberships();
    const reasonOf = this.change(step, mergedId);
    const after = this.memberships();
    const moved = new Set(
      [...after.keys()].filter((id) => {
        const [was, now] = [before.get(id) ?? new Set<string>(), after.get(id) as Set<string>];
        return was.size !== now.size || [...now].some((m) => !was.has(m));
      }),
    );
    const seen: Seen = [];
    for (const audienceId of moved) {
      const [was, now] = [before.get(audienceId) ?? new Set<string>(), after.get(audienceId) as Set<string>];
      const entered = [...now].filter((id) => !was.has(id)).sort();
      const left = [...was].filter((id) => !now.has(id)).sort();
      seen.push({ reason: reasonOf(audienceId, moved), audienceId, entered, left });
    }
    return seen;
  }

  /**
   * Makes the step's change; returns the reason each audience that moved is reported with:
   * the write's own for the audience it wrote, `dependency` for those that followed an audience
   * their rule names. A member write reports `dependency` when an audience the rule names moved
   * in it too, `member_changed` when only the members' data moved it.
   */
  private change(step: Step, mergedId: string): (audienceId: string, moved: Set<string>) => string {
    const member = (id: string, fields: Data): PlainMember => ({
      id,
      email: null,
      alternativeEmails: [],
      fields,
      createdAt: new Date(0),
    });
    const existing = (ids: string[]) => ids.filter((id) => this.members.has(id));
    const itsOwn = (own: string, reason: string) => (id: string) => (id === own ? reason : "dependency");
    switch (step.op) {
      case "create":
      case "change": {
        const ids = step.op === "create" ? step.ids.filter((id) => !this.members.has(id)) : existing(step.ids);
        for (const id of ids) this.members.set(id, member(id, step.data));
        return (id, moved) =>
          namedAudiences(this.audience(id).rule).some((named) => moved.has(named)) ? "dependency" : "member_changed";
      }
      case "add":
      case "remove": {
        const { include, exclude } = this.audience(step.audience);
        const [into, outOf] = step.op === "add" ? [include, exclude] : [exclude, include];
        for (const id of existing(step.ids)) {
          into.add(id);
          outOf.delete(id);
        }
        return itsOwn(step.audience, "manual");
      }
      case "rule":
        this.audience(step.audience).rule = RULES[step.rule] ?? null;
        return itsOwn(step.audience, "rule");
      case "merge": {
        const [a, b] = step.sources.map((id) => this.audience(id)) as [ModelAudience, ModelAudience];
        const memberships = this.memberships();
        const union = new Set([
          ...(memberships.get(step.sources[0]) ?? []),
          ...(memberships.get(step.sources[1]) ?? []),
        ]);
        const rule = unionFilter(a.rule, b.rule);
        const context = {
          ...this.context(),
          inAudience: (named: string, m: PlainMember) => !!memberships.get(named)?.has(m.id),
        };
        const exclude = [...this.members.values()].filter(
          (m) => referenceMatches(rule, m, context) && !union.has(m.id),
        );
        this.audiences.set(mergedId, {
          rule,
          include: new Set([...a.include, ...b.include]),
          exclude: new Set(exclude.map((m) => m.id)),
        });
        return itsOwn(mergedId, "merge");
      }
      case "snapshot":
        this.audiences.set(mergedId, { rule: null, include: this.membersOf(step.source), exclude: new Set() });
        return itsOwn(mergedId, "snapshot");
      case "delete":
        for (const id of step.ids) {
          this.members.delete(id);
          this.activities.delete(id);
          for (const { include, exclude } of this.audiences.values()) {
            include.delete(id);
            exclude.delete(id);
          }
        }
        return () => "member_deleted";
      case "act":
        for (const id of existing(step.ids)) {
          const done = this.activities.get(id) ?? [];
          done.push({
            type: step.type,
            occurredAt: this.now - step.daysAgo * DAY,
            properties: { amount: step.amount },
          });
          this.activities.set(id, done);
        }
        return (id, moved) =>
          namedAudiences(this.audience(id).rule).some((named) => moved.has(named)) ? "dependency" : "activity";
      case "tick":
        this.now += step.days * DAY;
        return (id, moved) =>
          namedAudiences(this.audience(id).rule).some((named) => moved.has(named)) ? "dependency" : "time";
    }
  }
}
