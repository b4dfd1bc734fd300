// docs/configuration.md's tables of variables and .env.example, written from the declarations of
// src/config/configuration.ts by `npm run generate`; test/unit/configuration-docs.test.ts fails
// when the files differ from what this renders.
import { CONFIGURATION } from "../src/config/configuration.ts";
import { SECTIONS, type Variable, variablesOf } from "../src/config/variable.ts";

const VARIABLES = variablesOf(CONFIGURATION);
const bySection = SECTIONS.map((section) => ({ section, variables: VARIABLES.filter((v) => v.section === section) }));

/** How docs/configuration.md marks the part it does not write by hand. */
export const DOCS_START =
  "<!-- The tables below are written by `npm run generate` from src/config/configuration.ts. -->";
export const DOCS_END = "<!-- End of the generated tables. -->";

/** A variable's default as docs/configuration.md shows it; .env.example leaves it empty when unset. */
function defaultCell(variable: Variable<unknown>): string {
  const value = variable.fallback;
  if (value === undefined || (Array.isArray(value) && value.length === 0)) return variable.shown ?? "(unset)";
  return `\`${String(value)}\``;
}

export function configurationTables(): string {
  const tables = bySection.map(({ section, variables }) =>
    [
      `### ${section}`,
      "",
      "| Variable | Default | Meaning |",
      "| --- | --- | --- |",
      ...variables.map((v) => `| \`${v.name}\` | ${defaultCell(v)} | ${v.about} |`),
    ].join("\n"),
  );
  return [DOCS_START, ...tables, DOCS_END].join("\n\n");
}

/** docs/configuration.md with its tables written anew. */
export function withConfigurationTables(markdown: string): string {
  const start = markdown.indexOf(DOCS_START);
  const end = markdown.indexOf(DOCS_END);
  if (start < 0 || end < start) throw new Error(`docs/configuration.md lacks the lines ${DOCS_START} … ${DOCS_END}`);
  return markdown.slice(0, start) + configurationTables() + markdown.slice(end + DOCS_END.length);
}

const plain = (markdown: string) => markdown.replace(/\[([^\]]+)\]\([^)]+\)/g, "$1").replaceAll("`", "");

/** Text as comment lines of at most 100 characters. */
function comment(text: string): string[] {
  const lines: string[] = [];
  let line = "#";
  for (const word of text.split(" ")) {
    if (line.length + 1 + word.length > 100 && line !== "#") {
      lines.push(line);
      line = "#";
    }
    line += ` ${word}`;
  }
  return [...lines, line];
}

export function envExample(): string {
  const header = [
    "# audience-service configuration: copy to .env and change what you need.",
    "# The service reads its environment only; load this file yourself, e.g.",
    "#   set -a; . ./.env; set +a; npm start",
    "# An empty value means unset. Written by `npm run generate` from src/config/configuration.ts.",
  ];
  const sections = bySection.map(({ section, variables }) =>
    [
      `# --- ${section} ---`,
      ...variables.flatMap((v) => {
        const fallback = v.fallback === undefined || Array.isArray(v.fallback) ? "" : String(v.fallback);
        return [...comment(plain(v.about)), `${v.name}=${fallback}`];
      }),
    ].join("\n"),
  );
  return `${[header.join("\n"), ...sections].join("\n\n")}\n`;
}
