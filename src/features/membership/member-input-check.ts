import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { readContract } from "../../contract/contract.ts";
import type { MemberInput } from "../../domain/member-identity.ts";
import { plainMessage } from "../../domain/validation-words.ts";

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;

/**
 * The contract's MemberInput schema, compiled once: an imported row is held to exactly the rules
 * a JSON body of addAudienceMembers is (id pattern and length, e-mail format, at most 20
 * alternative e-mails, field values of at most 1,024 characters without NUL, at most 50 fields).
 * Returns what is wrong with the input, in the words of the file's columns, or undefined.
 */
export function createMemberInputCheck(): (input: MemberInput) => string | undefined {
  let validate: ValidateFunction<MemberInput> | undefined;
  return (input) => {
    // Compiled at the first row, not at start: most processes never import.
    validate ??= compile();
    if (validate(input)) return undefined;
    const errors = validate.errors ?? [];
    // The anyOf (an id or an email) reports its branches too; the error at a value says more.
    const error = errors.find((e) => e.instancePath !== "") ?? errors[0];
    return error ? describe(error, input) : "is not a valid member";
  };
}

function compile(): ValidateFunction<MemberInput> {
  const ajv = new Ajv2020({ strict: false, allErrors: false, coerceTypes: false });
  addFormats(ajv);
  ajv.addSchema(readContract(), "contract");
  return ajv.compile<MemberInput>({ $ref: "contract#/components/schemas/MemberInput" });
}

function describe(error: ErrorObject, input: MemberInput): string {
  const [, part, key] = error.instancePath.split("/");
  const limit = error.params.limit as number | undefined;
  if (part === "alternativeEmails" && key !== undefined) {
    const email = input.alternativeEmails?.[Number(key)] ?? "";
    const what = error.keyword === "format" ? "is not a valid e-mail address" : `is longer than ${limit} characters`;
    return `alternativeEmails: ${JSON.stringify(email.slice(0, 80))} ${what}`;
  }
  const column = part === "fields" && key !== undefined ? key : (part ?? "row");
  switch (error.keyword) {
    case "format":
      return `${column}: not a valid e-mail address`;
    case "maxLength":
      return `${column}: longer than ${limit} characters`;
    case "maxItems":
      return `${column}: more than ${limit} addresses`;
    case "maxProperties":
      return `more than ${limit} fields`;
    case "pattern":
      return column === "id" ? "id: holds a control character" : `${column}: holds a NUL character`;
    default:
      return `${column}: ${plainMessage(error)}`;
  }
}
