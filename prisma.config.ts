import { defineConfig } from "prisma/config";

// Used by the Prisma CLI only (generate; migrate status/deploy for users who have its engine).
// The service applies prisma/migrations itself at start (src/platform/db/migrate.ts).
export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres" },
});
