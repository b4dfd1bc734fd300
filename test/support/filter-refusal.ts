import type { AppError } from "../../src/domain/errors.ts";

/** The field names a condition may hold, as the contract declares them. */
const FIELDS = /^(id|email|anyEmail|createdAt|audience|fields\.[A-Za-z][A-Za-z0-9_]{0,63})$/;

/**
 * The detail a refused filter is expected to carry: the pointer and the message, then the
 * condition's field when it has one and the message does not say it.
 */
export function detailOf(input: unknown, pointer: string, message: string): string {
  if (typeof input !== "object" || input === null || ["all", "any", "not"].some((key) => key in input)) {
    return `${pointer} ${message}`;
  }
  const field = (input as { field?: unknown }).field;
  const named = typeof field === "string" && FIELDS.test(field) && !message.includes(field);
  return named ? `${pointer} ${message} (the condition on ${field})` : `${pointer} ${message}`;
}

/** The problem a filter is refused with by `parse`: its code, the detail and the one field error. */
export function refusalOf(
  parse: (input: unknown) => unknown,
  input: unknown,
): { code?: string; detail?: string; pointer?: string; message?: string } {
  try {
    parse(input);
  } catch (error) {
    const { code, detail, errors } = error as AppError;
    return { code, detail, pointer: errors?.[0]?.pointer, message: errors?.[0]?.message };
  }
  return {};
}
