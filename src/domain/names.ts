import { BadRequestError } from "./errors.ts";

export const NAME_MAX_LENGTH = 200;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it rejects
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

/**
 * The stored form of an audience (or workspace) name: surrounding white space trimmed.
 * The contract already rejects most bad names; this guards the rules that need the trimmed form.
 */
export function normalizeName(raw: string, pointer = "/body/name"): string {
  const name = raw.trim();
  const problem =
    name.length === 0
      ? "must not be empty or only white space"
      : name.length > NAME_MAX_LENGTH
        ? `must be at most ${NAME_MAX_LENGTH} characters`
        : CONTROL_CHARACTERS.test(name)
          ? "must not contain control characters"
          : undefined;
  if (problem) throw new BadRequestError("invalid_request", `name ${problem}`, [{ pointer, message: problem }]);
  return name;
}

/**
 * The key two names are compared by: case-insensitive, and blind to Unicode composition forms. The
 * CLI, shipped without the server, keeps a copy (packages/client/src/cli/audience-lookup.ts).
 */
export function nameKey(name: string): string {
  return name.normalize("NFC").toLowerCase();
}
