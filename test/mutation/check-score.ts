// Reads Stryker's JSON report and fails when a mutated file's tests kill too few of its mutants:
// of those the unit tests reach (covered) and of all. Prints the per-file table either way.
import { readFileSync } from "node:fs";

const COVERED_MIN = 85;
const ALL_MIN = 75;

interface Report {
  files: Record<string, { mutants: { status: string; location: { start: { line: number } }; mutatorName: string }[] }>;
}

const report = JSON.parse(readFileSync(process.argv[2] ?? "reports/mutation/mutation.json", "utf8")) as Report;
const pct = (part: number, whole: number) => (whole === 0 ? 100 : (100 * part) / whole);
const failures: string[] = [];
const rows: string[] = [
  "| file | killed of covered | not covered | killed of all | survivors |",
  "|---|---|---|---|---|",
];
const total = { killed: 0, survived: 0, noCoverage: 0 };

for (const [file, { mutants }] of Object.entries(report.files).sort(([a], [b]) => a.localeCompare(b))) {
  // A timeout is a mutant the tests noticed (the code hung); ignored ones are the kept equivalents.
  const killed = mutants.filter((m) => m.status === "Killed" || m.status === "Timeout").length;
  const survivors = mutants.filter((m) => m.status === "Survived");
  const noCoverage = mutants.filter((m) => m.status === "NoCoverage").length;
  total.killed += killed;
  total.survived += survivors.length;
  total.noCoverage += noCoverage;
  const covered = pct(killed, killed + survivors.length);
  const all = pct(killed, killed + survivors.length + noCoverage);
  const where = survivors.map((m) => `${m.location.start.line}:${m.mutatorName}`).join(" ");
  rows.push(`| ${file} | ${covered.toFixed(0)}% | ${noCoverage} | ${all.toFixed(0)}% | ${where} |`);
  if (covered < COVERED_MIN) failures.push(`${file}: ${covered.toFixed(1)}% of covered mutants killed`);
  if (all < ALL_MIN) failures.push(`${file}: ${all.toFixed(1)}% of all mutants killed`);
}
const { killed, survived, noCoverage } = total;
rows.push(
  `| **all** | ${pct(killed, killed + survived).toFixed(0)}% | ${noCoverage} | ${pct(killed, killed + survived + noCoverage).toFixed(0)}% | ${survived} |`,
);
console.log(rows.join("\n"));
if (failures.length > 0) {
  console.error(`\nBelow ${COVERED_MIN}% of covered or ${ALL_MIN}% of all mutants killed:\n${failures.join("\n")}`);
  process.exit(1);
}
