import type { components } from "@audience-service/client";

/**
 * An activity condition as the rule builder draws it: did (or did not do) something, a number of
 * times, in a window, optionally only the activities whose one property compares as chosen. A
 * condition of another shape (a `where` of several conditions, a `between` window) is edited as
 * JSON (activityRowOf answers undefined).
 */
export type ActivityFilter = components["schemas"]["FilterActivity"];
export type CountOp = components["schemas"]["ActivityCount"]["op"];
export type WhereOp = components["schemas"]["ActivityWhereCondition"]["op"];
type Filter = components["schemas"]["Filter"];

export interface ActivityRow {
  id: number;
  kind: "activity";
  /** The activity type, as typed. */
  activity: string;
  /** false: the member did not (the condition wrapped in `not`). */
  did: boolean;
  countOp: CountOp;
  /** As typed. */
  count: string;
  window: "ever" | "withinLast" | "notWithinLast";
  /** An ISO 8601 duration, "" while none is typed. */
  duration: string;
  /** A property key; "" for every activity of the type. */
  property: string;
  propertyOp: WhereOp;
  propertyValue: string;
}

export const COUNT_LABELS: Record<CountOp, string> = {
  gte: "at least",
  gt: "more than",
  eq: "exactly",
  ne: "other than",
  lte: "at most",
  lt: "fewer than",
};

/** The property comparisons the builder offers (a number or a string compared with one value). */
export const PROPERTY_OPS: Partial<Record<WhereOp, string>> = {
  eq: "is",
  ne: "is not",
  gte: "is at least",
  lte: "is at most",
  gt: "is over",
  lt: "is under",
  contains: "contains",
};

export const WINDOW_LABELS: Record<ActivityRow["window"], string> = {
  ever: "ever",
  withinLast: "in the last",
  notWithinLast: "but not in the last",
};

export const newActivityRow = (id: number, activity = ""): ActivityRow => ({
  id,
  kind: "activity",
  activity,
  did: true,
  countOp: "gte",
  count: "1",
  window: "withinLast",
  duration: "P30D",
  property: "",
  propertyOp: "eq",
  propertyValue: "",
});

export const isActivityFilter = (filter: Filter): filter is ActivityFilter => "activity" in filter;

/** The row a saved activity condition (or `not` of one) is drawn as, or undefined for other shapes. */
export function activityRowOf(filter: Filter, id: number): ActivityRow | undefined {
  const did = !("not" in filter);
  const condition = "not" in filter ? filter.not : filter;
  if (!isActivityFilter(condition) || condition.between !== undefined) return undefined;
  const where = condition.where;
  if (
    where !== undefined &&
    !("field" in where && where.field.startsWith("properties.") && typeof where.value === "string")
  ) {
    return undefined;
  }
  if (where !== undefined && !(where.op in PROPERTY_OPS)) return undefined;
  const count = condition.count ?? { op: "gte", value: 1 };
  return {
    id,
    kind: "activity",
    activity: condition.activity,
    did,
    countOp: count.op,
    count: String(count.value),
    window:
      condition.withinLast !== undefined
        ? "withinLast"
        : condition.notWithinLast !== undefined
          ? "notWithinLast"
          : "ever",
    duration: condition.withinLast ?? condition.notWithinLast ?? "",
    property: where === undefined ? "" : where.field.slice("properties.".length),
    propertyOp: where?.op ?? "eq",
    propertyValue: where !== undefined && typeof where.value === "string" ? where.value : "",
  };
}

/** The filter a row stands for. */
export function activityFilterOf(row: ActivityRow): Filter {
  const condition: ActivityFilter = {
    activity: row.activity.trim(),
    count: { op: row.countOp, value: Number(row.count) },
  };
  if (row.property.trim() !== "") {
    condition.where = {
      field: `properties.${row.property.trim()}`,
      op: row.propertyOp,
      value: row.propertyValue.trim(),
    };
  }
  if (row.window !== "ever") condition[row.window] = row.duration;
  return row.did ? condition : { not: condition };
}

/** Whether the row has what the API needs: a type, a whole count, a duration, a property's value. */
export function activityComplete(row: ActivityRow): boolean {
  if (row.activity.trim() === "" || !/^\d{1,7}$/.test(row.count.trim())) return false;
  if (row.window !== "ever" && row.duration === "") return false;
  return row.property.trim() === "" || row.propertyValue.trim() !== "";
}

/** The row in words, for screen readers and summaries: "did order.placed at least 2 times in the last P30D". */
export function describeActivityRow(row: ActivityRow): string {
  const times = `${COUNT_LABELS[row.countOp]} ${row.count} time${row.count === "1" ? "" : "s"}`;
  const window = row.window === "ever" ? "" : ` ${WINDOW_LABELS[row.window]} ${row.duration}`;
  return `${row.did ? "did" : "did not do"} ${row.activity} ${times}${window}`;
}
