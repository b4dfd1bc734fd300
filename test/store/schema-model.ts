// Turns both prisma/schema.prisma (via Prisma's own parser) and a live database (via pg_catalog) into
// the same list of one-line facts, so that comparing them is a set difference with a readable diff.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { SqlRunner } from "../../src/platform/db/migrate.ts";

// ---- DMMF from the prisma-schema WASM module that ships inside the `prisma` package -------------
// The CLI bundles the wasm-bindgen glue for prisma_schema_build_bg.wasm into build/cli.js without
// exporting it, so this is the minimal glue for its one function we need: get_dmmf(json) -> json.

interface DmmfField {
  name: string;
  dbName?: string | null;
  kind: "scalar" | "enum" | "object" | "unsupported";
  type: string;
  isList: boolean;
  isRequired: boolean;
  hasDefaultValue: boolean;
  default?: unknown;
  nativeType?: [string, string[]] | null;
  relationFromFields?: string[];
  relationToFields?: string[];
  relationOnDelete?: string;
  relationOnUpdate?: string;
}
interface DmmfModel {
  name: string;
  dbName: string | null;
  fields: DmmfField[];
}
interface DmmfIndex {
  model: string;
  type: "id" | "unique" | "normal" | "fulltext";
  dbName?: string;
  algorithm?: string;
  fields: { name: string; sortOrder?: "asc" | "desc" }[];
}
interface DmmfEnum {
  name: string;
  dbName: string | null;
  values: { name: string; dbName: string | null }[];
}
export interface Datamodel {
  models: DmmfModel[];
  enums: DmmfEnum[];
  indexes: DmmfIndex[];
}

export function getDatamodel(schemaPath: string): Datamodel {
  const prismaDir = dirname(createRequire(import.meta.url).resolve("prisma/package.json"));
  const module = new WebAssembly.Module(readFileSync(join(prismaDir, "build", "prisma_schema_build_bg.wasm")));
  let wasm: any;
  let panic = "";
  const text = (ptr: number, len: number) =>
    new TextDecoder().decode(new Uint8Array(wasm.memory.buffer, ptr >>> 0, len));
  const handlers: Record<string, (...args: number[]) => unknown> = {
    set_message: (ptr, len) => {
      panic = text(ptr, len);
    },
    Error: (ptr, len) => new Error(text(ptr, len)),
    __wbindgen_throw: (ptr, len) => {
      throw new Error(text(ptr, len));
    },
    __wbindgen_init_externref_table: () => {
      const table = wasm.__wbindgen_externrefs;
      const offset = table.grow(4);
      table.set(0, undefined);
      for (const [i, value] of [undefined, null, true, false].entries()) table.set(offset + i, value);
    },
  };
  // Import names carry a build hash (__wbg_Error_e83987f665cf5504); match them by their stable part.
  const glue: WebAssembly.ModuleImports = {};
  for (const { name } of WebAssembly.Module.imports(module)) {
    const handler = handlers[name.replace(/^__wbg_/, "").replace(/_[0-9a-f]{16}$/, "")];
    if (!handler) throw new Error(`prisma_schema_build_bg.wasm needs an import this glue lacks: ${name}`);
    glue[name] = handler;
  }
  wasm = new WebAssembly.Instance(module, { __wbindgen_placeholder__: glue }).exports;
  wasm.__wbindgen_start();

  const input = new TextEncoder().encode(
    JSON.stringify({ prismaSchema: [[schemaPath, readFileSync(schemaPath, "utf8")]], noColor: true }),
  );
  const ptr = wasm.__wbindgen_malloc(input.length, 1) >>> 0;
  new Uint8Array(wasm.memory.buffer).set(input, ptr);
  let result: number[];
  try {
    result = wasm.get_dmmf(ptr, input.length);
  } catch (error) {
    throw new Error(`get_dmmf panicked: ${panic || String(error)}`);
  }
  const [outPtr, outLen, errorRef, failed] = result as [number, number, number, number];
  if (failed) throw wasm.__wbindgen_externrefs.get(errorRef); // a validation error of the schema
  const json = text(outPtr, outLen);
  wasm.__wbindgen_free(outPtr, outLen, 1);
  return JSON.parse(json).datamodel;
}

// ---- Facts the schema implies, the way `prisma migrate dev` would render it for PostgreSQL -------

const SCALAR_TYPES: Record<string, string> = {
  String: "text",
  Boolean: "boolean",
  Int: "integer",
  BigInt: "bigint",
  Float: "double precision",
  Decimal: "numeric(65,30)",
  DateTime: "timestamp(3) without time zone",
  Json: "jsonb",
  Bytes: "bytea",
};
const NATIVE_TYPES: Record<string, (args: string[]) => string> = {
  Timestamptz: (a) => `timestamp${a.length ? `(${a[0]})` : ""} with time zone`,
  Timestamp: (a) => `timestamp${a.length ? `(${a[0]})` : ""} without time zone`,
  VarChar: (a) => `character varying${a.length ? `(${a[0]})` : ""}`,
  Char: (a) => `character(${a[0] ?? 1})`,
  Bit: (a) => `bit(${a[0] ?? 1})`,
  Text: () => "text",
  Uuid: () => "uuid",
  Date: () => "date",
  SmallInt: () => "smallint",
  Integer: () => "integer",
  BigInt: () => "bigint",
  Json: () => "json",
  JsonB: () => "jsonb",
  Decimal: (a) => `numeric(${a.join(",")})`,
};
// Defaults Prisma computes in the client: they leave no DEFAULT on the column.
const CLIENT_DEFAULTS = new Set(["uuid", "cuid", "nanoid", "ulid"]);
const REFERENTIAL_ACTIONS: Record<string, string> = {
  Cascade: "CASCADE",
  Restrict: "RESTRICT",
  NoAction: "NO ACTION",
  SetNull: "SET NULL",
  SetDefault: "SET DEFAULT",
};

/** Prisma's default constraint names (psl ConstraintNames): PostgreSQL's 63-byte limit keeps the suffix. */
function constraintName(table: string, columns: string[] | null, suffix: string): string {
  const base = columns ? `${table}_${columns.join("_")}` : table;
  return base.slice(0, 63 - suffix.length) + suffix;
}

const facts = {
  table: (table: string) => `table ${table}`,
  column: (table: string, column: string, type: string, nullable: boolean, hasDefault: boolean) =>
    `column ${table}.${column}: ${type} ${nullable ? "NULL" : "NOT NULL"}${hasDefault ? " DEFAULT …" : ""}`,
  index: (kind: string, table: string, name: string, columns: string[], method: string) =>
    `${kind} ${name} ON ${table} (${columns.join(", ")})${method === "btree" ? "" : ` USING ${method}`}`,
  foreignKey: (table: string, name: string, cols: string[], ref: string, refCols: string[], del: string, upd: string) =>
    `foreign key ${name} ON ${table} (${cols.join(", ")}) REFERENCES ${ref} (${refCols.join(", ")}) ON DELETE ${del} ON UPDATE ${upd}`,
  enum: (name: string, values: string[]) => `enum ${name} (${values.join(", ")})`,
};
const INDEX_KINDS = { id: "primary key", unique: "unique index", normal: "index", fulltext: "fulltext index" };

/**
 * What the migrations create that prisma/schema.prisma cannot describe (Prisma has no expression
 * indexes); the schema's comments name each, so a reader of the schema still finds them.
 */
const MIGRATION_ONLY = [
  facts.index("index", "member_search", "member_search_trgm", ["searched"], "gin"),
  `${facts.index("index", "webhook_deliveries", "webhook_deliveries_leased_idx", ["workspace_id", "webhook_id"], "btree")} WHERE …`,
  `${facts.index("index", "audiences", "audiences_evaluated_at_idx", ["evaluated_at"], "btree")} WHERE …`,
];

export function schemaFacts(dm: Datamodel): string[] {
  const out: string[] = [];
  const enumName = new Map(dm.enums.map((e) => [e.name, e.dbName ?? e.name]));
  const models = new Map(dm.models.map((m) => [m.name, m]));
  const tableOf = (model: DmmfModel) => model.dbName ?? model.name;
  const columnOf = (model: DmmfModel, field: string) => {
    const f = model.fields.find((x) => x.name === field);
    if (!f) throw new Error(`${model.name}.${field} not found`);
    return f.dbName ?? f.name;
  };
  for (const e of dm.enums) {
    out.push(
      facts.enum(
        e.dbName ?? e.name,
        e.values.map((v) => v.dbName ?? v.name),
      ),
    );
  }
  for (const model of dm.models) {
    const table = tableOf(model);
    out.push(facts.table(table));
    for (const f of model.fields) {
      if (f.kind === "scalar" || f.kind === "enum") {
        let type: string | undefined;
        if (f.kind === "enum") type = enumName.get(f.type);
        else if (f.nativeType) type = NATIVE_TYPES[f.nativeType[0]]?.(f.nativeType[1]);
        else type = SCALAR_TYPES[f.type];
        if (!type) throw new Error(`schema-model.ts cannot map ${model.name}.${f.name} (${f.type} ${f.nativeType})`);
        const dflt = f.default as { name?: string } | undefined;
        const hasDefault = f.hasDefaultValue && !CLIENT_DEFAULTS.has(dflt?.name ?? "");
        // Prisma creates list columns nullable, whatever the schema says.
        out.push(
          facts.column(table, f.dbName ?? f.name, f.isList ? `${type}[]` : type, f.isList || !f.isRequired, hasDefault),
        );
      } else if (f.kind === "object" && f.relationFromFields?.length) {
        const target = models.get(f.type) as DmmfModel;
        const columns = f.relationFromFields.map((x) => columnOf(model, x));
        // A relation's `map:` name is not in the DMMF, so only Prisma's default FK names are supported.
        out.push(
          facts.foreignKey(
            table,
            constraintName(table, columns, "_fkey"),
            columns,
            tableOf(target),
            (f.relationToFields ?? []).map((x) => columnOf(target, x)),
            REFERENTIAL_ACTIONS[f.relationOnDelete ?? (f.isRequired ? "Restrict" : "SetNull")] as string,
            REFERENTIAL_ACTIONS[f.relationOnUpdate ?? "Cascade"] as string,
          ),
        );
      } else if (f.kind !== "object") {
        throw new Error(`schema-model.ts cannot map ${model.name}.${f.name} (${f.kind})`);
      }
    }
  }
  for (const index of dm.indexes) {
    const model = models.get(index.model) as DmmfModel;
    const table = tableOf(model);
    const columns = index.fields.map((f) => columnOf(model, f.name));
    const suffix = { id: "_pkey", unique: "_key", normal: "_idx", fulltext: "_idx" }[index.type];
    const name = index.dbName ?? constraintName(table, index.type === "id" ? null : columns, suffix);
    const sorted = index.fields.map((f, i) => (f.sortOrder === "desc" ? `${columns[i]} DESC` : (columns[i] as string)));
    out.push(facts.index(INDEX_KINDS[index.type], table, name, sorted, (index.algorithm ?? "BTree").toLowerCase()));
  }
  out.push(...MIGRATION_ONLY);
  return out.sort();
}

// ---- Facts a live database states, from pg_catalog, for the current schema -----------------------

const FK_ACTIONS: Record<string, string> = {
  a: "NO ACTION",
  r: "RESTRICT",
  c: "CASCADE",
  n: "SET NULL",
  d: "SET DEFAULT",
};
// Columns of a constraint/index in key order; attnum 0 (an expression) yields "(expression)".
const keyColumns = (rel: string, keys: string, extra = "") => `array(
  SELECT coalesce(a.attname, '(expression)')${extra} FROM unnest(${keys}) WITH ORDINALITY k(attnum, n)
  LEFT JOIN pg_attribute a ON a.attrelid = ${rel} AND a.attnum = k.attnum ORDER BY k.n)::text[]`;
// A table's partitions are not tables of the schema: Prisma describes the partitioned table only.
const inSchema = (t: string) =>
  `${t}.relnamespace = current_schema()::regnamespace AND ${t}.relname <> '_prisma_migrations' AND NOT ${t}.relispartition`;

export async function databaseFacts(db: SqlRunner): Promise<string[]> {
  const out: string[] = [];
  type Column = { table: string; column: string; type: string; not_null: boolean; has_default: boolean };
  for (const c of await db.query<Column>(`
    SELECT t.relname AS table, a.attname AS column, format_type(a.atttypid, a.atttypmod) AS type,
           a.attnotnull AS not_null, a.atthasdef AS has_default
    FROM pg_class t JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum > 0 AND NOT a.attisdropped
    WHERE t.relkind IN ('r', 'p') AND ${inSchema("t")}`)) {
    out.push(facts.column(c.table, c.column, c.type.replaceAll('"', ""), !c.not_null, c.has_default));
  }
  for (const t of await db.query<{ table: string }>(
    `SELECT t.relname AS table FROM pg_class t WHERE t.relkind IN ('r', 'p') AND ${inSchema("t")}`,
  )) {
    out.push(facts.table(t.table));
  }
  type Index = { table: string; name: string; kind: string; method: string; columns: string[]; partial: boolean };
  for (const i of await db.query<Index>(`
    SELECT t.relname AS table, c.relname AS name, am.amname AS method, x.indpred IS NOT NULL AS partial,
           CASE WHEN x.indisprimary THEN 'primary key' WHEN x.indisunique THEN 'unique index' ELSE 'index' END AS kind,
           ${keyColumns("t.oid", "x.indkey::int2[]", " || CASE WHEN x.indoption[k.n - 1] & 1 = 1 THEN ' DESC' ELSE '' END")} AS columns
    FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
    JOIN pg_am am ON am.oid = c.relam WHERE ${inSchema("t")}`)) {
    out.push(facts.index(i.kind, i.table, i.name, i.columns, i.method) + (i.partial ? " WHERE …" : ""));
  }
  type Fk = {
    table: string;
    name: string;
    columns: string[];
    ref: string;
    ref_columns: string[];
    del: string;
    upd: string;
  };
  for (const f of await db.query<Fk>(`
    SELECT t.relname AS table, con.conname AS name, r.relname AS ref, con.confdeltype AS del, con.confupdtype AS upd,
           ${keyColumns("con.conrelid", "con.conkey")} AS columns, ${keyColumns("con.confrelid", "con.confkey")} AS ref_columns
    FROM pg_constraint con JOIN pg_class t ON t.oid = con.conrelid JOIN pg_class r ON r.oid = con.confrelid
    WHERE con.contype = 'f' AND ${inSchema("t")}`)) {
    const action = (code: string) => FK_ACTIONS[code] ?? code;
    out.push(facts.foreignKey(f.table, f.name, f.columns, f.ref, f.ref_columns, action(f.del), action(f.upd)));
  }
  for (const e of await db.query<{ name: string; values: string[] }>(`
    SELECT t.typname AS name, array_agg(e.enumlabel::text ORDER BY e.enumsortorder) AS values
    FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid
    WHERE t.typnamespace = current_schema()::regnamespace GROUP BY t.typname`)) {
    out.push(facts.enum(e.name, e.values));
  }
  return out.sort();
}

/** What only one side states; both lists empty means the schema and the database agree. */
export function compareFacts(schema: string[], database: string[]) {
  const inDb = new Set(database);
  const inSchema = new Set(schema);
  return {
    onlyInSchema: schema.filter((fact) => !inDb.has(fact)),
    onlyInDatabase: database.filter((fact) => !inSchema.has(fact)),
  };
}
