// What a scenario of the benchmark is: the shared set-ups it may need or make, and how one is
// declared (registry.ts lists them).

import type { Store } from "../../src/platform/db/database.ts";
import type { BenchOptions } from "./options.ts";
import type { Receiver } from "./receiver.ts";
import type { ResultRow } from "./report.ts";
import type {
  BareRoute,
  Context,
  DataAudience,
  StartSecondProcess,
  StoreWriter,
} from "./scenarios/scenario-context.ts";
import type { TargetKey } from "./targets.ts";

/** The shared set-ups a scenario may need, and what it is given for each. */
export interface Setups {
  bigAudience: string;
  dataAudience: DataAudience;
  bareRoute: BareRoute;
  receivers: { receiver: Receiver; hanging: Receiver };
  secondProcess: StartSecondProcess;
  storeWriter: StoreWriter;
  serviceStore: Store;
  rateLimitedServer: true;
  serverMemory: (bareRssMb: number | undefined) => ResultRow[];
}
export type Need = keyof Setups;
/** The set-ups a scenario makes for the later ones; the others are the runner's (session.ts). */
export type Made = "bigAudience" | "dataAudience" | "bareRoute";

export const SETUPS: Record<Need, string> = {
  bigAudience: "the first start's workspace seeded with --size members, all in one audience (made by bulk)",
  dataAudience:
    "a workspace of its own with --data-size members with e-mail and 4 fields in one audience (made by data)",
  bareRoute: "the bare Fastify route's req/s and memory: the run's raw HTTP limit (measured by throughput)",
  receivers: "two webhook receivers in the bench process, one answering at once and one never",
  secondProcess: "another server process on the same database (PostgreSQL only)",
  storeWriter: "rows written straight into the service's store (the embedded store's server restarts)",
  serviceStore: "the service's database opened in the bench process, as the server opens it (PostgreSQL only)",
  rateLimitedServer: "the server restarted with rate limiting on (RATE_LIMIT_PER_MINUTE=10000000)",
  serverMemory: "every server process of the run, for its memory",
};

export interface Scenario {
  /** Its name for --skip and --only, and in the results. */
  name: string;
  what: string;
  /** Set-ups it cannot run without: a scenario making one runs before it, even if not selected. */
  needs: readonly Need[];
  /** Set-ups it takes when the run has them. */
  uses: readonly Need[];
  makes?: Made | undefined;
  targets: readonly TargetKey[];
  when?: ((opts: BenchOptions) => boolean) | undefined;
  run(ctx: Context, given: Partial<Setups>): Promise<unknown>;
}

/** Declares a scenario: `run` is given exactly the set-ups named, and returns the one it makes. */
export function scenario<N extends Need = never, U extends Need = never, M extends Made = never>(def: {
  name: string;
  what: string;
  needs?: readonly N[];
  uses?: readonly U[];
  makes?: M;
  targets?: readonly TargetKey[];
  when?: (opts: BenchOptions) => boolean;
  run(ctx: Context, given: Pick<Setups, N> & Partial<Pick<Setups, U>>): Promise<[M] extends [never] ? void : Setups[M]>;
}): Scenario {
  return { needs: [], uses: [], targets: [], ...def, run: def.run as Scenario["run"] };
}
