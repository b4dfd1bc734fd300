// CONTRIBUTING.md's commands, test folders and CI steps, held to package.json, test/ and .ci/run.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { describe, expect, it } from "vitest";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");
const DOC = read("CONTRIBUTING.md");
const section = (title: string) => DOC.split(`\n## ${title}\n`)[1]?.split("\n## ")[0] ?? "";
const SCRIPTS = Object.keys((JSON.parse(read("package.json")) as { scripts: Record<string, string> }).scripts);
/** npm's own hooks, run by other commands (npm install, npm start), never typed. */
const HOOKS = new Set(["postinstall", "prepare", "prestart"]);
/** How a script is typed: `npm test` and `npm start` need no `run`. */
const command = (script: string) => (script === "test" || script === "start" ? `npm ${script}` : `npm run ${script}`);

describe("CONTRIBUTING.md", () => {
  it("gives every script of package.json a row of its commands table", () => {
    const rows = [...section("Commands").matchAll(/^\| `(npm [a-z:]+(?: [a-z:]+)?)` \|/gm)].map((m) => m[1]);
    expect(SCRIPTS.filter((script) => !HOOKS.has(script) && !rows.includes(command(script)))).toEqual([]);
  });

  it("names only scripts package.json has", () => {
    const named = [...DOC.matchAll(/`npm run ([a-z:]+)/g)].map((m) => m[1] as string);
    expect(named.length).toBeGreaterThan(5);
    expect(named.filter((script) => !SCRIPTS.includes(script))).toEqual([]);
  });

  it("describes every folder of test/ in its table of the tests", () => {
    const folders = readdirSync(new URL("../../test/", import.meta.url)).filter((name) =>
      statSync(new URL(`../../test/${name}`, import.meta.url)).isDirectory(),
    );
    const rows = [...section("The tests").matchAll(/^\| `test\/([a-z]+)\/` \|/gm)].map((m) => m[1] as string);
    expect(rows.sort()).toEqual(folders.sort());
  });

  it("lists the steps of .ci/run, in order, under the titles it prints", () => {
    const steps = [...read(".ci/run").matchAll(/^step "(.+)"$/gm)].map((m) => m[1] as string);
    expect(steps.length).toBeGreaterThan(5);
    const listed = [...section("How CI runs").matchAll(/^\d+\. \*\*(.+?)\*\*/gms)].map((m) =>
      (m[1] as string).replace(/\s+/g, " "),
    );
    expect(listed).toEqual(steps);
  });
});
