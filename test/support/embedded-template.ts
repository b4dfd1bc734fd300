import { readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inject } from "vitest";
import type { TestProject } from "vitest/node";
import { applyMigrations, pgliteRunner } from "../../src/platform/db/migrate.ts";
import { openPglite } from "../../src/platform/db/pglite.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** A file holding a dump of a migrated embedded database, made once per run. */
    embeddedTemplatePath: string;
  }
}

/** The run's dump and how many projects still use it (every project's global setup runs in one process). */
const made = globalThis as { embeddedTemplate?: { path: Promise<string>; users: number } };

/**
 * vitest's global setup: one embedded database, migrated as openStore migrates one, dumped to a
 * file the test files start their in-memory stores from (StoreOptions.template). Creating an
 * embedded database takes a few seconds; loading the dump, under one. Made once per run, however
 * many projects use it, and removed when the last of them is done.
 */
export default async function setup(project: TestProject) {
  made.embeddedTemplate ??= { path: dumpTemplate(), users: 0 };
  const shared = made.embeddedTemplate;
  shared.users++;
  const path = await shared.path;
  project.provide("embeddedTemplatePath", path);
  return async () => {
    if (--shared.users > 0) return;
    made.embeddedTemplate = undefined;
    await rm(path, { force: true });
  };
}

async function dumpTemplate(): Promise<string> {
  const lite = await openPglite();
  await applyMigrations(pgliteRunner(lite));
  const dump = await lite.dumpDataDir("none");
  await lite.close();
  const path = join(tmpdir(), `audience-service-template-${process.pid}.tar`);
  await writeFile(path, Buffer.from(await dump.arrayBuffer()));
  return path;
}

let template: Promise<Blob> | undefined;

/** The dump, read once per test file's process. */
export function embeddedTemplate(): Promise<Blob> {
  template ??= readFile(inject("embeddedTemplatePath")).then((bytes) => new Blob([bytes]));
  return template;
}
