// Makes a new embedded database in a process of its own (createDataDir in pglite.ts), so that
// PGlite's initdb, and the memory it takes, end with this process. Plain JavaScript: it runs as
// it is, from the sources and from the built server alike. Arguments: the directory, and PGlite's
// options as JSON. On failure it writes the error's code, errno and message as JSON on the last
// line of stderr, and exits with 1.
import { PGlite } from "@electric-sql/pglite";

const [dataPath, options] = [process.argv[2], JSON.parse(process.argv[3] ?? "{}")];
try {
  const db = await PGlite.create(dataPath, options);
  await db.close();
} catch (error) {
  const { code, errno, message } = error ?? {};
  process.stderr.write(`\n${JSON.stringify({ code, errno, message: message || String(error) })}\n`);
  process.exitCode = 1;
}
