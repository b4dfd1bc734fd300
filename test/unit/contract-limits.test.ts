// The limits the contract states, in its prose and its schemas, are the numbers of the constants
// that enforce them: each row below names a constant and every place that states it, so a change
// of either side fails here until the other follows.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { CONFIGURATION } from "../../src/config/configuration.ts";
import { MAX_DURATION_DAYS } from "../../src/domain/durations.ts";
import { MAX_FIELDS } from "../../src/domain/member-identity.ts";
import { NAME_MAX_LENGTH } from "../../src/domain/names.ts";
import { KEY_CACHE_MS } from "../../src/features/admin/auth-service.ts";
import { MAX_MEMBERS_PER_REQUEST } from "../../src/features/audiences/audience-member-service.ts";
import { MAX_KEPT_ERRORS } from "../../src/features/imports/import-chunk.ts";
import { MAX_ROW_BYTES } from "../../src/features/imports/import-reader.ts";
import { MAX_UNFINISHED_IMPORTS } from "../../src/features/imports/import-service.ts";
import { HISTORY_DAYS } from "../../src/features/insight/history-repo.ts";
import { MAX_IDS_PER_EVENT } from "../../src/features/membership/outbox-entries.ts";
import { MAX_CHAIN, MAX_RULE_REACH } from "../../src/features/membership/rules/audience-graph.ts";
import { MAX_FILTER_CONDITIONS, MAX_FILTER_DEPTH } from "../../src/features/membership/rules/filter.ts";
import { WORKSPACE_RULE_BOUNDS } from "../../src/features/membership/rules/rule-bounds.ts";
import { SAMPLE } from "../../src/features/membership/rules/rule-insight-repo.ts";
import { MAX_WEBHOOKS_PER_WORKSPACE } from "../../src/features/webhooks/webhook-service.ts";
import { KEEP_HOURS } from "../../src/platform/http/idempotency-repo.ts";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");
const text = read("openapi/openapi.yaml");
const contract = parse(text);
const n = (value: number) => value.toLocaleString("en-US");
const flat = (prose: string) => prose.replace(/\s+/g, " ");

/** A place of the contract (or a doc) that states a limit: its text, or its number. */
interface Place {
  label: string;
  value: () => unknown;
}
const operation = (operationId: string): Place => ({
  label: `operation ${operationId}`,
  value: () => {
    for (const methods of [...Object.values(contract.paths), ...Object.values(contract.webhooks)])
      for (const op of Object.values(methods as Record<string, { operationId?: string; description?: string }>))
        if (op?.operationId === operationId) return flat(op.description ?? "");
    throw new Error(`no operation ${operationId}`);
  },
});
const schema = (path: string): Place => ({
  label: `schema ${path}`,
  value: () => {
    const found = path.split("/").reduce((node, key) => node?.[key], contract.components.schemas);
    if (found === undefined) throw new Error(`no ${path} in the contract's schemas`);
    return typeof found === "string" ? flat(found) : found;
  },
});
const parameter = (path: string): Place => ({
  label: `parameter ${path}`,
  value: () => flat(path.split("/").reduce((node, key) => node?.[key], contract.components.parameters)),
});
const errorRow = (code: string): Place => ({
  label: `error table's ${code}`,
  value: () => text.split("\n").find((line) => line.includes(`| \`${code}\` |`)) ?? "",
});
const doc = (path: string): Place => ({ label: path, value: () => flat(read(path)) });

/** A constant, the phrases that state it (where), and the schema keywords that are it. */
interface Limit {
  name: string;
  says: [Place, string][];
  is?: [Place, number][];
}

const { bodyLimit } = CONFIGURATION.settings.http;
const { maxBytes, chunkRows } = CONFIGURATION.settings.imports;
const { costBudget } = CONFIGURATION.settings.rules;
const WORKSPACE_PHRASES = [
  `${n(WORKSPACE_RULE_BOUNDS.conditions)} conditions`,
  `${n(WORKSPACE_RULE_BOUNDS.bytes)} bytes`,
  `${n(WORKSPACE_RULE_BOUNDS.timeConditions)} relative-time and activity conditions`,
  `${n(WORKSPACE_RULE_BOUNDS.dependants)} audiences naming one audience`,
];
const RULE_BOUNDS_PLACES = [
  errorRow("rule_limit_exceeded"),
  operation("setAudienceFilter"),
  operation("mergeAudiences"),
  schema("Filter/description"),
  doc("docs/rules.md"),
];

const LIMITS: Limit[] = [
  {
    name: "WORKSPACE_RULE_BOUNDS",
    says: RULE_BOUNDS_PLACES.flatMap((place) => WORKSPACE_PHRASES.map((phrase) => [place, phrase] as [Place, string])),
  },
  {
    name: "MAX_FILTER_DEPTH, MAX_FILTER_CONDITIONS, MAX_CHAIN, MAX_RULE_REACH",
    says: [
      [
        schema("Filter/description"),
        `At most ${MAX_FILTER_DEPTH} levels deep and ${MAX_FILTER_CONDITIONS} conditions in all`,
      ],
      [
        schema("Filter/description"),
        `chain at most ${MAX_CHAIN} audiences and reach at most ${MAX_RULE_REACH} audiences`,
      ],
      [errorRow("invalid_filter"), `more than ${MAX_CHAIN} deep`],
      [errorRow("invalid_filter"), `reach more than ${MAX_RULE_REACH} audiences`],
      [
        operation("mergeAudiences"),
        `at most ${MAX_FILTER_DEPTH} levels deep and ${MAX_FILTER_CONDITIONS} conditions, reaching at most ${MAX_RULE_REACH} audiences`,
      ],
      [doc("docs/rules.md"), `reach at most ${MAX_RULE_REACH} audiences`],
    ],
    is: [
      [schema("FilterAll/properties/all/maxItems"), MAX_FILTER_CONDITIONS],
      [schema("FilterAny/properties/any/maxItems"), MAX_FILTER_CONDITIONS],
    ],
  },
  {
    name: "MAX_MEMBERS_PER_REQUEST",
    says: [
      [errorRow("too_many_items"), `More than ${n(MAX_MEMBERS_PER_REQUEST)} members in one request`],
      [schema("AddMembersRequest/description"), `at most ${n(MAX_MEMBERS_PER_REQUEST)} entries in all`],
      [operation("addAudienceMembers"), `at most ${n(MAX_MEMBERS_PER_REQUEST)} entries`],
      [operation("upsertMembers"), `up to ${n(MAX_MEMBERS_PER_REQUEST)} members`],
    ],
    is: [
      [schema("AddMembersRequest/properties/memberIds/maxItems"), MAX_MEMBERS_PER_REQUEST],
      [schema("AddMembersRequest/properties/members/maxItems"), MAX_MEMBERS_PER_REQUEST],
      [schema("RemoveMembersRequest/properties/memberIds/maxItems"), MAX_MEMBERS_PER_REQUEST],
      [schema("UpsertMembersRequest/properties/members/maxItems"), MAX_MEMBERS_PER_REQUEST],
    ],
  },
  {
    name: "MAX_WEBHOOKS_PER_WORKSPACE",
    says: [
      [errorRow("too_many_items"), `more than ${MAX_WEBHOOKS_PER_WORKSPACE} webhooks in a workspace`],
      [operation("createWebhook"), `At most ${MAX_WEBHOOKS_PER_WORKSPACE} webhooks per workspace`],
    ],
  },
  {
    name: "MAX_IDS_PER_EVENT",
    says: [
      [schema("MemberIdBatch/description"), `At most ${n(MAX_IDS_PER_EVENT)} ids`],
      [operation("audienceMembersChangedWebhook"), `At most ${n(MAX_IDS_PER_EVENT)} ids per event`],
    ],
    is: [[schema("MemberIdBatch/maxItems"), MAX_IDS_PER_EVENT]],
  },
  {
    name: "NAME_MAX_LENGTH",
    says: [[schema("AudienceName/description"), `1 to ${NAME_MAX_LENGTH} characters`]],
    is: [[schema("AudienceName/maxLength"), NAME_MAX_LENGTH]],
  },
  {
    name: "SAMPLE (a dry run's members named)",
    says: [[schema("MemberSample/properties/sample/description"), `(at most ${SAMPLE})`]],
    is: [[schema("MemberSample/properties/sample/maxItems"), SAMPLE]],
  },
  {
    name: "MAX_FIELDS",
    says: [[schema("MemberFields/description"), `Up to ${MAX_FIELDS} keys in all`]],
    is: [[schema("MemberFields/maxProperties"), MAX_FIELDS]],
  },
  {
    name: "MAX_ROW_BYTES",
    says: [[operation("createImport"), `at most 1 MiB (${n(MAX_ROW_BYTES)} bytes of UTF-8)`]],
  },
  {
    name: "MAX_KEPT_ERRORS",
    says: [[schema("Import/properties/errors/description"), `The first ${MAX_KEPT_ERRORS} rejected rows`]],
    is: [[schema("Import/properties/errors/maxItems"), MAX_KEPT_ERRORS]],
  },
  {
    name: "MAX_UNFINISHED_IMPORTS",
    says: [[errorRow("too_many_imports"), `already has ${MAX_UNFINISHED_IMPORTS} import jobs that have not ended`]],
  },
  {
    name: "HISTORY_DAYS",
    says: [[operation("audienceHistory"), `Kept for ${HISTORY_DAYS} days`]],
  },
  {
    name: "MAX_DURATION_DAYS",
    says: [[schema("Filter/description"), `at most ${MAX_DURATION_DAYS / 365.25} years`]],
  },
  {
    name: "KEY_CACHE_MS",
    says: [[operation("revokeApiKey"), `within ${KEY_CACHE_MS / 1000} seconds on every other server process`]],
  },
  {
    name: "KEEP_HOURS (idempotency)",
    says: [[parameter("IdempotencyKey/description"), `within ${KEEP_HOURS} hours`]],
  },
  {
    name: "BODY_LIMIT, IMPORT_MAX_BYTES (defaults)",
    says: [
      [errorRow("payload_too_large"), `${bodyLimit.fallback / 1_048_576} MiB by default`],
      [errorRow("payload_too_large"), `${maxBytes.fallback / 1_073_741_824} GiB by default`],
    ],
  },
  {
    name: "IMPORT_CHUNK_ROWS (defaults)",
    says: [[operation("createImport"), `${n(chunkRows.byStore.postgres)} rows on PostgreSQL`]],
  },
  {
    name: "FILTER_COST_BUDGET (defaults)",
    says: [
      [
        doc("docs/rules.md"),
        `by default ${n(costBudget.byStore.postgres)} on PostgreSQL and ${n(costBudget.byStore.embedded)}`,
      ],
    ],
  },
];

describe("the limits the contract states", () => {
  it.each(LIMITS.map((limit) => [limit.name, limit] as const))("are %s", (_, limit) => {
    for (const [place, phrase] of limit.says) expect(place.value(), place.label).toContain(phrase);
    for (const [place, value] of limit.is ?? []) expect(place.value(), place.label).toBe(value);
  });
});
