/** The contract's field key: a letter, then at most 63 letters, digits or _ (FieldKey). */
const FIELD_KEY = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

/** What is wrong with a typed field key, said before it is sent; undefined when it can be sent (or is empty). */
export function fieldKeyProblem(key: string): string | undefined {
  const trimmed = key.trim();
  if (trimmed === "" || FIELD_KEY.test(trimmed)) return undefined;
  return "A field key starts with a letter, then at most 63 letters, digits or _ (no spaces or dots).";
}
