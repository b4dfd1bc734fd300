/**
 * The end of every switch over a closed set (operators, field kinds, event types, reasons): a case
 * left out makes `value` something other than `never`, so the type check fails at the switch until
 * the new member of the set is handled. Reached at run time only by data the types did not
 * describe, which is a fault of the service, not of the request.
 */
export function assertNever(value: never, what = "value"): never {
  throw new Error(`unexpected ${what}: ${JSON.stringify(value)}`);
}
