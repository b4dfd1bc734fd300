import type { components } from "../../../generated/api.d.ts";
import { isoOfMs } from "../../domain/iso-time.ts";
import { withNamedFields } from "../../domain/member-merge.ts";
import type { MemberRow } from "./member-repo.ts";

type Member = components["schemas"]["Member"];

/** A stored member in the contract's shape. */
export function toMember(row: MemberRow): Member {
  return {
    id: row.id,
    createdAt: isoOfMs(row.createdAt.getTime()),
    email: row.email,
    fields: withNamedFields(row.fields) as Member["fields"],
    alternativeEmails: row.alternativeEmails ?? [],
  };
}
