/**
 * PostgreSQL failures as they reach us through Prisma's driver adapters: the SQLSTATE and the
 * constraint sit in meta.driverAdapterError.cause (query API and raw queries alike).
 */
interface AdapterCause {
  originalCode?: string;
  originalMessage?: string;
  constraint?: { fields?: string[]; index?: string };
}

function adapterCause(error: unknown): AdapterCause | undefined {
  const meta = (error as { meta?: { driverAdapterError?: { cause?: AdapterCause } } } | null)?.meta;
  return meta?.driverAdapterError?.cause ?? (error as { cause?: AdapterCause } | null)?.cause;
}

export function sqlState(error: unknown): string | undefined {
  return adapterCause(error)?.originalCode ?? (error as { code?: string } | null)?.code;
}

/** True for a unique violation on the named index (or, where the driver reports fields, on those columns). */
export function isUniqueViolation(error: unknown, index: string, fields?: string[]): boolean {
  const cause = adapterCause(error);
  if (cause?.originalCode !== "23505") return false;
  if (cause.originalMessage?.includes(`"${index}"`)) return true;
  if (cause.constraint?.index === index) return true;
  return fields !== undefined && cause.constraint?.fields?.join(",") === fields.join(",");
}

/** A failure another attempt of the same transaction can get past. */
export class RetryTransaction extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "RetryTransaction";
  }
}

export function isRetryable(error: unknown): boolean {
  if (error instanceof RetryTransaction) return true;
  const state = sqlState(error);
  // serialization_failure, deadlock_detected; P2034 is Prisma's name for the same
  return state === "40001" || state === "40P01" || (error as { code?: string } | null)?.code === "P2034";
}
