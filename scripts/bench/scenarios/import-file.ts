// The import scenario's CSV file, and the table PostgreSQL's own COPY of the same file fills.
import { writeFile } from "node:fs/promises";
import { literal, type RawDb } from "../raw.ts";

/** The columns of the file: an e-mail and 4 fields, the last a custom one (src/features/imports/import-columns.ts). */
const HEADER = "email,firstName,lastName,company,plan";
const PLANS = ["free", "team", "business"];
/** Lines per string handed to the file at a time. */
const BLOCK = 10_000;

/** The file's data row n: a new member, known by its e-mail only (the service gives it an id). */
const line = (n: number) => `import${n}@example.com,First${n},Last${n},Company ${n % 997},${PLANS[n % PLANS.length]}\n`;

/** Writes the header and `rows` data rows to path, a block of lines at a time; returns its bytes. */
export async function writeImportCsv(path: string, rows: number): Promise<number> {
  let bytes = 0;
  async function* blocks(): AsyncGenerator<string> {
    yield `${HEADER}\n`;
    for (let from = 0; from < rows; from += BLOCK) {
      let block = "";
      for (let n = from; n < Math.min(rows, from + BLOCK); n++) block += line(n);
      bytes += Buffer.byteLength(block);
      yield block;
    }
  }
  await writeFile(path, blocks());
  return bytes + HEADER.length + 1;
}

export const RAW_IMPORT_TABLE = "bench_import_members";

/**
 * A table shaped like `members` (prisma/migrations: its columns and types, its primary key, and
 * the uniqueness of e-mails that the service keeps in member_emails, here an index on lower(email)),
 * for the raw baseline's COPY. COPY fills columns from the file's columns or from their defaults,
 * and cannot build a jsonb value from several of them: the four fields land in text columns of
 * their own, from which `fields` (and `folded`, the service's case-folded copy) are generated
 * columns. jsonb_object(text[]) is the immutable constructor a generated column may use, and it
 * makes flat objects only: `folded` holds the same values, lower-cased, without the service's
 * nesting. It carries the indexes of members (the member numbers, the listing order and the search
 * trigrams over the same values), which any load into a table shaped like members pays for: the
 * search index alone doubles COPY's time. The service also keeps member_emails, its own design,
 * which the baseline does not have.
 */
export async function createRawImportTable(raw: RawDb, workspaceId: string): Promise<string> {
  await raw.query(`
    CREATE TABLE ${RAW_IMPORT_TABLE} (
      workspace_id text COLLATE "C" NOT NULL DEFAULT ${literal(workspaceId)},
      id text COLLATE "C" NOT NULL DEFAULT 'mem_' || replace(gen_random_uuid()::text, '-', ''),
      seq integer NOT NULL GENERATED ALWAYS AS IDENTITY,
      email text,
      first_name text,
      last_name text,
      company text,
      plan text,
      fields jsonb NOT NULL GENERATED ALWAYS AS (jsonb_object(ARRAY[
        'firstName', first_name, 'lastName', last_name, 'company', company, 'plan', plan])) STORED,
      alternative_emails text[] DEFAULT ARRAY[]::text[],
      folded jsonb NOT NULL GENERATED ALWAYS AS (jsonb_object(ARRAY[
        'id', lower(id), 'email', lower(email), 'firstName', lower(first_name), 'lastName', lower(last_name),
        'company', lower(company), 'plan', lower(plan)])) STORED,
      created_at timestamptz(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
      updated_at timestamptz(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
      PRIMARY KEY (workspace_id, id)
    )`);
  await raw.query(
    `CREATE UNIQUE INDEX ${RAW_IMPORT_TABLE}_email_key ON ${RAW_IMPORT_TABLE} (workspace_id, lower(email))`,
  );
  await raw.query(`CREATE UNIQUE INDEX ${RAW_IMPORT_TABLE}_seq_key ON ${RAW_IMPORT_TABLE} (workspace_id, seq)`);
  await raw.query(`CREATE INDEX ${RAW_IMPORT_TABLE}_order ON ${RAW_IMPORT_TABLE} (workspace_id, created_at, id)`);
  // The search index of prisma/migrations/20261124100000_member_search_index, over the flat `folded`.
  await raw.query(`CREATE EXTENSION IF NOT EXISTS pg_trgm`);
  await raw.query(`
    CREATE INDEX ${RAW_IMPORT_TABLE}_search ON ${RAW_IMPORT_TABLE} USING gin ((
      coalesce(folded->>'email', '') || E'\n' || coalesce(folded->>'firstName', '') || E'\n' ||
      coalesce(folded->>'lastName', '') || E'\n' || coalesce(folded->>'role', '') || E'\n' ||
      coalesce(folded->>'company', '')
    ) gin_trgm_ops)`);
  return `${RAW_IMPORT_TABLE} (email, first_name, last_name, company, plan)`;
}
