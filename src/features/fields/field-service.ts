import type { components } from "../../../generated/api.d.ts";
import { audienceLabel, BadRequestError, ConflictError, NotFoundError } from "../../domain/errors.ts";
import type { FieldType } from "../../domain/field-types.ts";
import { NAMED_FIELDS } from "../../domain/member-merge.ts";
import type { Store } from "../../platform/db/database.ts";
import type { MembershipService } from "../membership/membership-service.ts";
import type { FieldTypeRepo, FieldTypeRow } from "../membership/rules/field-type-repo.ts";
import { fieldsOf } from "../membership/rules/filter.ts";
import type { RuleRepo } from "../membership/rules/rule-repo.ts";
import type { FieldCatalogueRepo } from "./field-catalogue-repo.ts";

type Schemas = components["schemas"];

const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export interface FieldServiceDeps {
  store: Pick<Store, "db">;
  membership: Pick<MembershipService, "workspaceWrite">;
  fieldTypes: Pick<FieldTypeRepo, "list" | "declare" | "remove" | "misfits">;
  rules: Pick<RuleRepo, "rules">;
  catalogue: Pick<FieldCatalogueRepo, "held">;
}

const toDefinition = (row: FieldTypeRow): Schemas["FieldDefinition"] => ({
  key: row.key,
  type: row.type,
  createdAt: row.createdAt.toISOString(),
});

/** Typed custom fields: declaring a field's type, which every member write then respects. */
export function createFieldService({ store, membership, fieldTypes, rules, catalogue }: FieldServiceDeps) {
  /** 409 field_in_use when a rule (of any audience, archived ones too) reads the field. */
  async function refuseIfUsed(db: Parameters<RuleRepo["rules"]>[0], workspaceId: string, key: string) {
    const users = (await rules.rules(db, workspaceId))
      .filter((a) => fieldsOf(a.filter).includes(key))
      .sort((a, b) => byCodePoint(a.id, b.id));
    if (users.length === 0) return;
    // Named as a person knows them ("Name" (aud_…)), as filter_cycle does; the ids stay in audienceIds.
    const labels = users.map((a) => audienceLabel(a.id, a.name));
    throw new ConflictError(
      "field_in_use",
      `The rule of ${users.length === 1 ? "audience" : "audiences"} ${labels.join(", ")} uses fields.${key}; change the rule first.`,
      { audienceIds: users.map((a) => a.id) },
    );
  }

  return {
    /**
     * The catalogue: the named fields, every field a member holds and every declared one, by key
     * in code point order. The declarations are read first: a field declared meanwhile is listed
     * as a string at worst, never typed with values the declaration refused.
     */
    async list(workspaceId: string): Promise<Schemas["FieldList"]> {
      const declared = new Map((await fieldTypes.list(store.db, workspaceId)).map((row) => [row.key, row]));
      const held = new Map((await catalogue.held(store.db, workspaceId)).map((field) => [field.key, field]));
      const keys = [...new Set([...NAMED_FIELDS, ...declared.keys(), ...held.keys()])].sort(byCodePoint);
      return {
        results: keys.map((key) => {
          const declaration = declared.get(key);
          return {
            key,
            type: declaration?.type ?? "string",
            createdAt: declaration ? declaration.createdAt.toISOString() : null,
            memberCount: held.get(key)?.memberCount ?? 0,
            sampleValues: held.get(key)?.sampleValues ?? [],
          };
        }),
      };
    },

    /**
     * Gives a field a type. Under the workspace's member lock, which every member write and every
     * rule change takes too: no value is written and no rule saved between the checks and the
     * declaration. A string is stored as no declaration at all.
     */
    async declare(workspaceId: string, key: string, type: FieldType): Promise<Schemas["FieldDefinition"]> {
      if ((NAMED_FIELDS as readonly string[]).includes(key)) {
        throw new BadRequestError("invalid_request", `${key} is a named field and stays a string.`, [
          { pointer: "/params/fieldKey", message: "must not be firstName, lastName, role or company" },
        ]);
      }
      return membership.workspaceWrite(workspaceId, { memberWrites: true }, async (w) => {
        const current = (await fieldTypes.list(w.tx, workspaceId)).find((row) => row.key === key);
        if (current?.type === type) return toDefinition(current);
        if (current === undefined && type === "string") {
          return { key, type, createdAt: new Date().toISOString() };
        }
        await refuseIfUsed(w.tx, workspaceId, key);
        if (type === "string") {
          await fieldTypes.remove(w.tx, workspaceId, key);
          return { key, type, createdAt: new Date().toISOString() };
        }
        const misfits = await fieldTypes.misfits(w.tx, workspaceId, key, type);
        if (misfits.count > 0) {
          throw new ConflictError(
            "field_values_invalid",
            `${misfits.count} ${misfits.count === 1 ? "member holds a value" : "members hold values"} of ${key} that ${misfits.count === 1 ? "does" : "do"} not parse as a ${type}; correct or clear them first.`,
            misfits,
          );
        }
        return toDefinition(await fieldTypes.declare(w.tx, workspaceId, key, type));
      });
    },

    /** The field becomes a string again; its values stay as they are. */
    remove(workspaceId: string, key: string): Promise<void> {
      return membership.workspaceWrite(workspaceId, { memberWrites: true }, async (w) => {
        const declared = (await fieldTypes.list(w.tx, workspaceId)).some((row) => row.key === key);
        if (!declared) throw new NotFoundError("field_not_found", `Field ${key} has no declared type.`);
        await refuseIfUsed(w.tx, workspaceId, key);
        await fieldTypes.remove(w.tx, workspaceId, key);
      });
    },
  };
}

export type FieldService = ReturnType<typeof createFieldService>;
