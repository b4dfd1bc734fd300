import { execFile, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";

// Fault tests stop and freeze PostgreSQL: never the shared cluster on 5432 (other tests run on
// it), always a cluster of their own, made here on a free port in 5440–5499 and dropped after.
const PREFIX = "audfault_";

const run = (command: string, args: string[]) => execFileSync(command, args, { stdio: "pipe" }).toString();
// Stopping and starting take a second or two: asynchronously, so the test's clients keep running.
const runAsync = async (command: string, args: string[]) => (await promisify(execFile)(command, args)).stdout;

function postgresVersion(): string {
  const out = run("ls", ["/etc/postgresql"]).trim().split("\n");
  const version = out.sort().at(-1);
  if (!version) throw new Error("no PostgreSQL installation under /etc/postgresql");
  return version;
}

const clusters = () =>
  run("pg_lsclusters", ["--no-header"])
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => line.split(/\s+/))
    .map(([version, name, port]) => ({ version: version ?? "", name: name ?? "", port: Number(port) }));

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}

export interface OwnCluster {
  url(database?: string): string;
  port: number;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** SIGSTOP to every process of the cluster: it accepts connections but answers nothing, like a partition. */
  freeze(): Promise<void>;
  thaw(): Promise<void>;
  drop(): void;
  /** The cluster's server log. */
  log(): string;
  /** A replica made this cluster the primary (pg_ctlcluster promote): it leaves recovery. */
  promote(): Promise<void>;
  /** CPU seconds the cluster's processes have used so far, those that have exited included. */
  cpuSeconds(): number;
}

export interface OwnClusterOptions {
  /**
   * Make the cluster a streaming replica of this one: its data directory is a base backup of the
   * primary's (`pg_basebackup -R`, which writes primary_conninfo and standby.signal).
   */
  replicaOf?: OwnCluster;
}

/** Creates and starts a PostgreSQL cluster of this test's own (trust authentication on 127.0.0.1). */
export async function createOwnCluster(options: OwnClusterOptions = {}): Promise<OwnCluster> {
  const version = postgresVersion();
  // A cluster whose test runner was killed before it could drop it would hold its port forever;
  // the name says which process made it, so only the clusters of dead runners are dropped.
  for (const stale of clusters().filter((c) => c.name.startsWith(PREFIX))) {
    const owner = Number(stale.name.split("_")[1]);
    if (!isAlive(owner)) run("pg_dropcluster", ["--stop", stale.version, stale.name]);
  }
  const taken = new Set(clusters().map((c) => c.port));
  let port = 0;
  for (const candidate of shuffle(Array.from({ length: 60 }, (_, i) => 5440 + i))) {
    if (!taken.has(candidate) && (await portIsFree(candidate))) {
      port = candidate;
      break;
    }
  }
  if (port === 0) throw new Error("no free port in 5440–5499 for a PostgreSQL cluster");
  const name = `${PREFIX}${process.pid}_${randomBytes(3).toString("hex")}`;
  // Slow statements and lock waits go to the cluster's log, which log() returns, for a failure's report.
  const settings = ["log_min_duration_statement=1000", "log_lock_waits=on", "deadlock_timeout=500ms"];
  run("pg_createcluster", [
    version,
    name,
    "--port",
    String(port),
    ...settings.flatMap((s) => ["-o", s]),
    "--",
    "--auth=trust",
  ]);
  if (options.replicaOf) {
    try {
      baseBackup(version, name, options.replicaOf.port);
    } catch (error) {
      run("pg_dropcluster", [version, name]);
      throw error;
    }
  }
  const ctl = async (action: string) => {
    await runAsync("pg_ctlcluster", ["--skip-systemctl-redirect", version, name, action]);
  };
  let frozen: string[] = [];
  const processes = () => {
    const postmaster =
      readFileSync(`/var/lib/postgresql/${version}/${name}/postmaster.pid`, "utf8").split("\n")[0] ?? "";
    const children = run("pgrep", ["-P", postmaster]).trim().split("\n").filter(Boolean);
    return [postmaster, ...children];
  };
  const signal = (pids: string[], sig: "SIGSTOP" | "SIGCONT") => {
    for (const pid of pids) process.kill(Number(pid), sig);
  };
  const cluster: OwnCluster = {
    port,
    url: (database = "postgres") => `postgresql://postgres@127.0.0.1:${port}/${database}`,
    start: () => ctl("start"),
    stop: () => ctl("stop"),
    async freeze() {
      frozen = processes();
      signal(frozen, "SIGSTOP");
    },
    async thaw() {
      signal(frozen, "SIGCONT");
      frozen = [];
    },
    promote: () => ctl("promote"),
    cpuSeconds() {
      // The postmaster's own time and its reaped children's, and the live children's own.
      const [postmaster = "", ...children] = processes();
      const [utime = 0, stime = 0, cutime = 0, cstime = 0] = procTimes(postmaster);
      const live = children.reduce((sum, pid) => {
        const [u = 0, s = 0] = procTimes(pid);
        return sum + u + s;
      }, 0);
      return (utime + stime + cutime + cstime + live) / 100;
    },
    log: () => readFileSync(`/var/log/postgresql/postgresql-${version}-${name}.log`, "utf8"),
    drop() {
      signal(frozen, "SIGCONT");
      frozen = [];
      run("pg_dropcluster", ["--stop", version, name]);
    },
  };
  try {
    await cluster.start();
  } catch (error) {
    cluster.drop();
    throw error;
  }
  return cluster;
}

/** Replaces the new cluster's data directory with a base backup of the primary's, as the postgres user. */
function baseBackup(version: string, name: string, primaryPort: number): void {
  const data = `/var/lib/postgresql/${version}/${name}`;
  // Emptied, not removed: its parent is not the postgres user's to create it again.
  for (const entry of readdirSync(data)) rmSync(join(data, entry), { recursive: true, force: true });
  const command = [
    `/usr/lib/postgresql/${version}/bin/pg_basebackup`,
    ...["-h", "127.0.0.1", "-p", String(primaryPort), "-U", "postgres", "-D", data, "-R", "-X", "stream", "-c", "fast"],
  ];
  // The data directory must be the server's user's: as root, the backup runs as postgres.
  if (process.getuid?.() === 0) run("runuser", ["-u", "postgres", "--", ...command]);
  else run(command[0] as string, command.slice(1));
}

/** utime, stime, cutime and cstime of a process, in clock ticks (none once it has exited). */
function procTimes(pid: string): number[] {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat
      .slice(stat.lastIndexOf(")") + 2)
      .split(" ")
      .slice(11, 15)
      .map(Number);
  } catch {
    return [];
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}
