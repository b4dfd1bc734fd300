import { FILTER_OPERATORS, type FilterFieldKind } from "../../generated/filter-operators.ts";
import { assertNever } from "../../src/domain/assert-never.ts";

type Op = (typeof FILTER_OPERATORS)[FilterFieldKind][number];

/** What an operator's value is: none, one, a list, a [low, high] pair, or a duration. */
export type ValueShape = "none" | "one" | "list" | "pair" | "duration";

/**
 * The shape of each operator's value. A new operator in the contract fails the type check here
 * until it is given one; the generators below then try it on every kind that lists it.
 */
export function valueShapeOf(op: Op): ValueShape {
  switch (op) {
    case "exists":
    case "notExists":
      return "none";
    case "in":
    case "notIn":
      return "list";
    case "between":
      return "pair";
    case "withinLast":
    case "notWithinLast":
      return "duration";
    case "eq":
    case "ne":
    case "contains":
    case "startsWith":
    case "endsWith":
    case "gt":
    case "gte":
    case "lt":
    case "lte":
    case "before":
    case "after":
      return "one";
    default:
      return assertNever(op, "operator");
  }
}

/**
 * The operators of a kind of field whose value has this shape, as the contract lists them: what
 * the property tests' generators draw from, so that they try every operator the service takes.
 */
export const opsOf = <K extends FilterFieldKind>(kind: K, shape: ValueShape): (typeof FILTER_OPERATORS)[K][number][] =>
  FILTER_OPERATORS[kind].filter((op) => valueShapeOf(op) === shape);
