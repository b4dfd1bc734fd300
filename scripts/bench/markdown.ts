// docs/performance.md's tables, rendered from a run's result lines (npm run bench -- --markdown
// FILE…) rather than typed by hand: per run, a paragraph saying what ran where, the table of
// results, and the verdicts counted; and the registry itself (--list) as tables.
import { SCENARIOS } from "./registry.ts";
import { cells, type ResultLine, TABLE_HEADER } from "./report.ts";
import { SETUPS } from "./scenario.ts";
import { boundsOf, kindOf, TARGET_KEYS, targetText } from "./targets.ts";

const escapeCell = (cell: string) => cell.replaceAll("|", "\\|");
const row = (values: string[]) => `| ${values.map(escapeCell).join(" | ")} |`;
const table = (header: string[], rows: string[][]) =>
  [row(header), row(header.map(() => "---")), ...rows.map(row)].join("\n");
const thousands = (n: number) => n.toLocaleString("en-US");

/** The lines of each run, in the order the runs first appear. */
function byRun(lines: ResultLine[]): ResultLine[][] {
  const runs = new Map<string, ResultLine[]>();
  for (const line of lines) {
    const key = `${line.run.started_at} ${line.store}`;
    runs.set(key, [...(runs.get(key) ?? []), line]);
  }
  return [...runs.values()];
}

const RAW_LIMIT_LABELS: Record<string, (n: number) => string> = {
  bare_route_req_s: (n) => `a bare Fastify route ${thousands(n)} req/s`,
  unnest_insert_rows_s: (n) => `\`INSERT … SELECT FROM unnest(…)\` ${thousands(n)} rows/s`,
  copy_from_csv_rows_s: (n) => `\`COPY … FROM STDIN\` ${thousands(n)} rows/s`,
  keyset_page_ms: (n) => `a keyset page of 100 ${n} ms`,
};

function describeRun(first: ResultLine): string {
  const { run } = first;
  const store = first.store === "postgres" ? "PostgreSQL" : "the embedded store";
  const limits = Object.entries(run.raw_limits)
    .filter(([name, value]) => value !== null && RAW_LIMIT_LABELS[name])
    .map(([name, value]) => (RAW_LIMIT_LABELS[name] as (n: number) => string)(value as number));
  return [
    `\`npm run bench${run.args ? ` -- ${run.args}` : ""}\` on ${store}, build \`${first.commit ?? "unknown"}\`, ` +
      `started ${run.started_at.slice(0, 16).replace("T", " ")} UTC: ${thousands(first.size)} members, ` +
      `${thousands(first.batch)} per request; ${Math.round(run.seconds / 6) / 10} minutes.`,
    `${run.describe}.`,
    `Machine: ${run.machine.cpus} × ${run.machine.cpu}, ${run.machine.mem_gib} GiB, node ${run.machine.node}; ` +
      `load average ${run.load_start} at the start and ${run.load_end} at the end.`,
    ...(limits.length > 0 ? [`Its raw limits in this run: ${limits.join(", ")}.`] : []),
  ].join("\n");
}

function verdicts(lines: ResultLine[]): string {
  const count = (result: ResultLine["result"]) => lines.filter((l) => l.result === result).length;
  const misses = lines.filter((l) => l.result === "MISS").map((l) => l.metric);
  return (
    `${count("PASS")} targets met, ${count("MISS")} missed${misses.length ? ` (${misses.join(", ")})` : ""}, ` +
    `${count("info")} rows for information.`
  );
}

/** One section per run: a heading, what ran where, the table, the verdicts and the rows' notes. */
export function renderResults(lines: ResultLine[]): string {
  return byRun(lines)
    .map((run) => {
      const first = run[0] as ResultLine;
      const heading = `### ${first.store === "postgres" ? "PostgreSQL" : "Embedded store"}, ${thousands(first.size)} members${first.quick ? " (--quick)" : ""}`;
      const notes = run.filter((l) => l.note).map((l) => `- ${l.label}: ${l.note}`);
      return [heading, describeRun(first), table(TABLE_HEADER, run.map(cells)), verdicts(run), ...notes].join("\n\n");
    })
    .join("\n\n");
}

/** The rows a summary (the README's) shows: one per kind of work. */
const HEADLINE = [
  "bulk_add_new_ids",
  "page_depth_0",
  "get_audience_throughput",
  "import_csv_new",
  "mixed_load",
  "webhook_throughput",
  "server_peak_rss",
];

/** One table of the headline rows, a column per run (e.g. PostgreSQL and the embedded store). */
export function renderHeadline(lines: ResultLine[]): string {
  const runs = byRun(lines);
  const header = [
    "scenario",
    ...runs.map((run) => {
      const first = run[0] as ResultLine;
      return `${first.store === "postgres" ? "PostgreSQL" : "embedded"} (ratio, result)`;
    }),
    "target",
  ];
  const body = HEADLINE.flatMap((metric) => {
    const found = runs.map((run) => run.find((l) => l.metric === metric));
    const any = found.find((l) => l !== undefined);
    if (!any) return [];
    const shown = found.map((l) => {
      if (!l) return "–";
      const [, service, , ratio, , result] = cells(l);
      return `${service} (${ratio}, ${result})`;
    });
    const targets = [...new Set(found.map((l) => l?.target).filter(Boolean))];
    // Without the figures a label carries in parentheses: they are one run's, and the row shows several.
    return [[any.label.replace(/\s*\([^()]*\d[^()]*\)/g, ""), ...shown, targets.join(" / ")]];
  });
  return table(header, body);
}

/** The registry: the scenarios in their order, the set-ups they need, and the table of targets. */
export function renderRegistry(): string {
  const scenarios = SCENARIOS.map((s) => [
    s.name,
    s.what,
    [...s.needs, ...s.uses.map((u) => `(${u})`)].join(", ") || "–",
    s.makes ?? "–",
    s.targets.join(", ") || "–",
  ]);
  const setups = Object.entries(SETUPS).map(([name, what]) => [name, what]);
  const targets = TARGET_KEYS.map((key) => {
    const postgres = boundsOf(key, "postgres");
    const embedded = boundsOf(key, "embedded");
    const same = targetText(postgres) === targetText(embedded);
    const units = [...new Set([...postgres, ...embedded].map((b) => (b.kind === "ratio" ? `× ${b.unit}` : b.unit)))];
    return [
      key,
      kindOf(postgres) === kindOf(embedded) ? kindOf(postgres) : `${kindOf(postgres)} / ${kindOf(embedded)}`,
      units.join(", "),
      same ? targetText(postgres) : `PostgreSQL: ${targetText(postgres)}; embedded: ${targetText(embedded)}`,
    ];
  });
  return [
    "Scenarios, in the order they run ((set-up): used when the run has it):",
    table(["scenario", "measures", "needs", "makes", "targets"], scenarios),
    "Set-ups:",
    table(["set-up", "what"], setups),
    "Targets:",
    table(["target", "kind", "units", "bound"], targets),
  ].join("\n\n");
}
