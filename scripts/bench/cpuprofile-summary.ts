// Summarizes a V8 .cpuprofile (from `npm run bench -- --cpu-prof=DIR`): where the server's CPU
// time went, by package (or source directory) and by function, self time.
//   npx tsx scripts/bench/cpuprofile-summary.ts DIR/CPU.….cpuprofile [top=25]
import { readFileSync } from "node:fs";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const [file, topArg] = process.argv.slice(2);
if (!file) {
  process.stderr.write("usage: tsx scripts/bench/cpuprofile-summary.ts FILE.cpuprofile [top]\n");
  process.exit(2);
}
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const selfUs = new Map<number, number>();
for (const [i, id] of profile.samples.entries()) selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
const totalUs = profile.endTime - profile.startTime;

/** node_modules/<pkg> (scoped too), a repository directory, or a V8 pseudo-frame. */
function area(url: string, name: string): string {
  if (!url) return `(${name || "native"})`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1] as string;
  const repo = /\/(src\/[^/]+|generated\/[^/]+|scripts)\//.exec(url);
  if (repo) return repo[1] as string;
  if (url.startsWith("node:")) return url;
  return url.replace(/^file:\/\//, "");
}

const areas = new Map<string, number>();
const functions = new Map<string, number>();
for (const [id, us] of selfUs) {
  const { functionName, url, lineNumber } = (byId.get(id) as Node).callFrame;
  const where = area(url, functionName);
  areas.set(where, (areas.get(where) ?? 0) + us);
  const fn = `${functionName || "(anonymous)"} ${url ? `${url.split("/").slice(-2).join("/")}:${lineNumber + 1}` : ""}`;
  functions.set(fn, (functions.get(fn) ?? 0) + us);
}
const print = (title: string, entries: Map<string, number>) => {
  process.stdout.write(`\n${title}\n`);
  for (const [name, us] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    process.stdout.write(
      `${((100 * us) / totalUs).toFixed(1).padStart(6)}%  ${(us / 1_000).toFixed(0).padStart(8)} ms  ${name}\n`,
    );
  }
};
process.stdout.write(`${file}: ${(totalUs / 1e6).toFixed(1)} s profiled\n`);
print("self time by package / directory", areas);
print("self time by function", functions);
