import { parseArgs } from "node:util";

export interface BenchOptions {
  store: "postgres" | "embedded";
  /** Where to create the run's databases (PostgreSQL only); any database on the server. */
  databaseUrl?: string | undefined;
  quick: boolean;
  /** Members added to the big audience (scenario 1), and so the size of the workspace. */
  size: number;
  /** Member ids or members per request. */
  batch: number;
  /** Entries of the bulk add with member data (half of them already exist). */
  dataSize: number;
  /** Activities written before the activity scenario measures (over --size members, 360 days). */
  activities: number;
  pageWarmup: number;
  pageSamples: number;
  /** Seconds of load per HTTP throughput measurement, after a warm-up of loadWarmup seconds. */
  loadSeconds: number;
  loadWarmup: number;
  connections: number;
  /** Also measure GET …/audiences/:id with rate limiting on (a second server start). */
  rateLimitedRun: boolean;
  /** Start the server under test with --cpu-prof; profiles land in this directory. */
  cpuProfDir?: string | undefined;
  /** Keep the run's databases / data directories for inspection (EXPLAIN ANALYZE). */
  keep: boolean;
  /** Every loop gives up after this many minutes in all. */
  maxMinutes: number;
  /** Scenarios left out, and (when not empty) the only ones selected: names of registry.ts. */
  skip: Set<string>;
  only: Set<string>;
  /** Also write the run's result lines (JSON) to this file. */
  out?: string | undefined;
  /** Print the registry (scenarios, set-ups, targets) instead of running. */
  list: boolean;
  /** Render these result files as markdown instead of running; only the headline rows. */
  markdown: string[];
  headline: boolean;
}

const usage = (names: readonly string[]) => `Usage: npm run bench -- [options]

  PostgreSQL: DATABASE_URL=postgresql://user@127.0.0.1:5432/db npm run bench
              (a server on this machine: creates bench_<random> and bench_<random>_raw there,
              drops them at the end)
  Embedded:   npm run bench -- --embedded
              (PGlite: the server in a temporary DATA_DIR, the raw baseline in-process)

Options:
  --quick              small sizes for a CI smoke run (timings are reported, never asserted)
  --embedded           benchmark the embedded store (PGlite) instead of PostgreSQL
  --size=N             members in the big audience and rows of the import's CSV file
                       (default 1000000, --quick 20000)
  --batch=N            ids per request (default 10000, --quick 2000)
  --data-size=N        entries of the bulk add with member data (default size/5)
  --activities=N       activities stored before the activity scenario measures, over --size
                       members (default 10 × size, --quick 2 × size)
  --samples=N          page requests measured per depth (default 200, --quick 30)
  --duration=S         seconds of HTTP load per throughput run (default 10, --quick 1)
  --connections=N      autocannon connections (default 10)
  --rate-limited, --no-rate-limited
                       the extra GET throughput run with rate limiting on (a server restart;
                       default on, off with --quick)
  --cpu-prof=DIR       run the server under test with node --cpu-prof, profiles in DIR
                       (summarize one: npx tsx scripts/bench/cpuprofile-summary.ts FILE)
  --keep               keep the run's databases / data directories
  --max-minutes=M      give up after M minutes (default 180, --quick 5); given up, or
                       interrupted (Ctrl-C, SIGTERM), a run reports the scenarios it finished
  --skip=a,b           leave out scenarios (e.g. to keep a database for EXPLAIN ANALYZE quickly); one of
                       ${names.join(", ")}
                       (a scenario needing what a left-out one makes is left out too)
  --only=a,b           run only these scenarios, and those making what they need
  --list               the scenarios, what each needs, and the table of targets
  --out=FILE           also write the result lines (JSON, one per measured row) to FILE
  --markdown FILE…     render result lines (a --out file, or a run's whole output) as the
                       markdown tables of docs/performance.md, instead of running
  --headline           with --markdown: one table of the headline rows, a column per run
  --help               this text
`;

/** `names`: the registry's scenarios, for --skip and --only. */
export function parseOptions(argv: string[], env: NodeJS.ProcessEnv, names: readonly string[]): BenchOptions {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      quick: { type: "boolean", default: false },
      embedded: { type: "boolean", default: false },
      size: { type: "string" },
      batch: { type: "string" },
      "data-size": { type: "string" },
      activities: { type: "string" },
      samples: { type: "string" },
      duration: { type: "string" },
      connections: { type: "string" },
      "rate-limited": { type: "boolean" },
      "cpu-prof": { type: "string" },
      keep: { type: "boolean", default: false },
      "max-minutes": { type: "string" },
      skip: { type: "string" },
      only: { type: "string" },
      out: { type: "string" },
      list: { type: "boolean", default: false },
      markdown: { type: "boolean", default: false },
      headline: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
    strict: true,
    allowNegative: true,
    allowPositionals: true,
  });
  if (values.help) {
    process.stdout.write(usage(names));
    process.exit(0);
  }
  if (positionals.length > 0 && !values.markdown) throw new Error(`unexpected arguments: ${positionals.join(" ")}`);
  const quick = values.quick;
  const int = (name: string, raw: string | undefined, fallback: number, min: number, max: number) => {
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name} must be an integer in ${min}…${max}`);
    return n;
  };
  const batch = int("batch", values.batch, quick ? 2_000 : 10_000, 10, 10_000);
  // Whole batches only: the page cursors are computed from the batch layout.
  const size = Math.ceil(int("size", values.size, quick ? 20_000 : 1_000_000, 1_000, 9_000_000) / batch) * batch;
  const dataSize = Math.ceil(int("data-size", values["data-size"], size / 5, 2, 9_000_000) / batch) * batch;
  const activities = int("activities", values.activities, size * (quick ? 2 : 10), 1_000, 100_000_000);
  const store = values.embedded ? "embedded" : "postgres";
  const databaseUrl = env.DATABASE_URL || undefined;
  const running = !values.list && !values.markdown;
  if (running && store === "postgres" && !databaseUrl) {
    throw new Error(`Set DATABASE_URL to benchmark PostgreSQL, or pass --embedded.\n\n${usage(names)}`);
  }
  if (values.markdown && positionals.length === 0) throw new Error("--markdown: name the result files (- for stdin)");
  return {
    store,
    databaseUrl: store === "postgres" ? databaseUrl : undefined,
    quick,
    size,
    batch,
    dataSize,
    activities,
    pageWarmup: quick ? 5 : 20,
    pageSamples: int("samples", values.samples, quick ? 30 : 200, 5, 100_000),
    loadSeconds: int("duration", values.duration, quick ? 1 : 10, 1, 600),
    loadWarmup: quick ? 1 : 3,
    connections: int("connections", values.connections, 10, 1, 1_000),
    rateLimitedRun: values["rate-limited"] ?? !quick,
    cpuProfDir: values["cpu-prof"],
    keep: values.keep,
    maxMinutes: int("max-minutes", values["max-minutes"], quick ? 5 : 180, 1, 24 * 60),
    skip: scenarioNames("skip", values.skip, names),
    only: scenarioNames("only", values.only, names),
    out: values.out,
    list: values.list,
    markdown: values.markdown ? positionals : [],
    headline: values.headline,
  };
}

function scenarioNames(option: string, raw: string | undefined, names: readonly string[]): Set<string> {
  const given = (raw ?? "").split(",").filter(Boolean);
  for (const name of given) {
    if (!names.includes(name)) throw new Error(`--${option}: unknown scenario ${name}; one of ${names.join(", ")}`);
  }
  return new Set(given);
}
