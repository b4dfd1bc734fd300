-- Member search (a case-insensitive term within e-mail, first name, last name, role or company)
-- scanned every member of the workspace: 1.5 s for a rare term at 1,000,000 members. A trigram
-- index over the folded values, one per line, finds the candidates; the exact per-field test
-- runs on those only (src/store/member-page.ts writes the same expression, which the planner
-- must see unchanged to use the index). pg_trgm ships with PostgreSQL's contrib package and
-- with the embedded store, and is a trusted extension (no superuser needed since PostgreSQL 13).
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE INDEX "members_search_trgm" ON "members" USING gin ((
  coalesce("folded"->>'email', '') || E'\n' ||
  coalesce("folded"->'fields'->>'firstName', '') || E'\n' ||
  coalesce("folded"->'fields'->>'lastName', '') || E'\n' ||
  coalesce("folded"->'fields'->>'role', '') || E'\n' ||
  coalesce("folded"->'fields'->>'company', '')
) gin_trgm_ops);
