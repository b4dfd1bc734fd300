import { BadRequestError } from "./errors.ts";

/**
 * A timestamp of a query parameter (`from`, `to`, `asOf`) in epoch milliseconds, undefined when absent;
 * 400 invalid_request pointing at the parameter when it is not a time.
 */
export function queryInstant(value: string | undefined, name: "from" | "to" | "asOf"): number | undefined {
  if (value === undefined) return undefined;
  const at = Date.parse(value);
  if (Number.isNaN(at)) {
    throw new BadRequestError("invalid_request", `${name} is not a time this service can read.`, [
      { pointer: `/query/${name}`, message: "must be an ISO 8601 timestamp" },
    ]);
  }
  return at;
}
