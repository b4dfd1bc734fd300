// The server's memory, read from /proc: sampled over the scenarios, at each start, and at its peak
// over the whole run (every server process of the run, including those stopped for a restart).
import { readFileSync } from "node:fs";
import type { ResultRow } from "./report.ts";

/** Reads one "Vm…:  123 kB" line of /proc/<pid>/status, in MiB; null once the process is gone. */
export function procStatusMb(pid: number, field: "VmRSS" | "VmHWM"): number | null {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** User + system CPU seconds the process has used (Linux clock ticks are 1/100 s). */
export function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

/** Samples a process's resident set every intervalMs: the peak over the whole run and per window. */
export class RssSampler {
  peakMb = 0;
  private windowPeakMb = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pid: number,
    intervalMs = 100,
  ) {
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  private sample(): void {
    const rss = procStatusMb(this.pid, "VmRSS");
    if (rss === null) return;
    this.peakMb = Math.max(this.peakMb, rss);
    this.windowPeakMb = Math.max(this.windowPeakMb, rss);
  }

  /** Starts a new window; returns the peak of the one that ends. */
  nextWindow(): number {
    this.sample();
    const peak = this.windowPeakMb;
    this.windowPeakMb = procStatusMb(this.pid, "VmRSS") ?? 0;
    return peak;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/** A server's memory once it listens: its peak so far (the start itself) and its idle RSS. */
export interface StartMemory {
  peakMb: number;
  idleMb: number;
  /** The largest peak of a process the server started meanwhile (the embedded store's initdb), if any. */
  childPeakMb: number | null;
  /** The largest sum of the server's and its processes' RSS, sampled. */
  treePeakMb: number;
}

const childrenOf = (pid: number): number[] => {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").split(" ").filter(Boolean).map(Number);
  } catch {
    return [];
  }
};

/**
 * Samples, while a server starts, the processes it starts (the embedded store makes a new
 * database in a process of its own): their peak, and the whole tree's RSS.
 */
export function watchStart(
  pid: number,
  intervalMs = 50,
): { stop(): { childPeakMb: number | null; treePeakMb: number } } {
  let childPeakMb: number | null = null;
  let treePeakMb = 0;
  const timer = setInterval(() => {
    let tree = procStatusMb(pid, "VmRSS") ?? 0;
    for (const child of childrenOf(pid)) {
      tree += procStatusMb(child, "VmRSS") ?? 0;
      const peak = procStatusMb(child, "VmHWM");
      if (peak !== null) childPeakMb = Math.max(childPeakMb ?? 0, peak);
    }
    treePeakMb = Math.max(treePeakMb, tree);
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      return { childPeakMb, treePeakMb };
    },
  };
}

/** Read a second after the server began to listen, before any request. */
export async function startMemory(pid: number, watched: ReturnType<typeof watchStart>): Promise<StartMemory> {
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const peakMb = procStatusMb(pid, "VmHWM") ?? 0;
  const { childPeakMb, treePeakMb } = watched.stop();
  return { peakMb, idleMb: procStatusMb(pid, "VmRSS") ?? 0, childPeakMb, treePeakMb: Math.max(treePeakMb, peakMb) };
}

interface Server {
  start: StartMemory;
  peakRssMb(): number;
}

/** The report's memory rows: the first start, a restart (if the run made one), the whole run. */
export function memoryRows(servers: Server[], sampledPeakMb: number, bareRssMb: number | undefined): ResultRow[] {
  const [first, restarted] = servers;
  const row = (metric: string, label: string, value: number, target?: "server_peak_rss"): ResultRow => ({
    metric,
    label,
    unit: "MB",
    value,
    baseline: bareRssMb ?? null,
    baselineLabel: "bare Fastify process",
    ratio: bareRssMb ? value / bareRssMb : null,
    target,
    serverPeakRssMb: value,
  });
  const peak = Math.max(sampledPeakMb, ...servers.map((server) => server.peakRssMb()));
  return [
    ...(first
      ? [
          row("server_start_peak_rss", "server peak RSS during the first start (empty DATA_DIR)", first.start.peakMb),
          row("server_idle_rss_first_start", "server idle RSS after the first start", first.start.idleMb),
          ...(first.start.childPeakMb === null
            ? []
            : [
                row(
                  "initdb_process_peak_rss",
                  "peak RSS of the process that made the new database at the first start",
                  first.start.childPeakMb,
                ),
                row(
                  "first_start_tree_peak_rss",
                  "server and that process together during the first start (sampled)",
                  first.start.treePeakMb,
                ),
              ]),
        ]
      : []),
    ...(restarted
      ? [row("server_idle_rss_restart", "server idle RSS after a restart (existing DATA_DIR)", restarted.start.idleMb)]
      : []),
    row("server_peak_rss", "server peak RSS over the whole run", peak, "server_peak_rss"),
  ];
}
