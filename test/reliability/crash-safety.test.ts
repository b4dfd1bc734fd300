import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { execute, Ledger, type LedgerRequest, verify } from "./crash-ledger.ts";
import { seededRandom, seedFromEnv } from "./random.ts";
import {
  createTestDatabase,
  killProcessGroup,
  type ServerProcess,
  send,
  startServerProcess,
  stopServerProcess,
} from "./server-process.ts";

/**
 * Crash safety: the real server process is SIGKILLed during a stream of bulk adds and merges,
 * restarted on the same store, and everything it ever acknowledged must be there, whole; what
 * it did not acknowledge must be there whole or not at all.
 */
const ITERATIONS = 5;
const IN_FLIGHT = 6;
const TARGETS_PER_ITERATION = 3;
const BASE_MEMBERS = 500;

const seed = seedFromEnv();
const { random, between, pick, sample } = seededRandom(seed);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const storeName = process.env.TEST_DATABASE_URL ? "PostgreSQL" : "embedded store (PGlite)";

describe(`crash safety on the ${storeName}`, () => {
  it("loses no acknowledged request and applies none partially across SIGKILLs during bulk adds and merges", async () => {
    let storeEnv: Record<string, string>;
    if (process.env.TEST_DATABASE_URL) {
      const database = await createTestDatabase(process.env.TEST_DATABASE_URL);
      cleanups.push(() => database.drop());
      storeEnv = { DATABASE_URL: database.url };
    } else {
      const dataDir = await mkdtemp(join(tmpdir(), "audience-crash-"));
      cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
      storeEnv = { DATA_DIR: dataDir };
    }
    let server: ServerProcess | undefined;
    cleanups.push(async () => {
      if (server) await killProcessGroup(server);
    });

    server = await startServerProcess(storeEnv);
    expect(server.firstStart, server.output()).toBeDefined();
    const { workspaceId, apiKey } = server.firstStart ?? { workspaceId: "", apiKey: "" };
    const ws = `/v0/workspaces/${workspaceId}`;
    const ledger = new Ledger();
    const verifications: string[] = [];
    let lost = 0;
    let partial = 0;
    const problems: string[] = [];

    for (let iteration = 1; iteration <= ITERATIONS; iteration++) {
      const live: ServerProcess = server;
      // Audiences for this iteration, each with a base set of members, all acknowledged.
      const targets: string[] = [];
      for (let t = 0; t < TARGETS_PER_ITERATION; t++) {
        const created = await send(live, apiKey, "POST", `${ws}/audiences`, { name: `crash ${iteration}.${t}` });
        expect(created.status).toBe(201);
        targets.push(created.body.id);
        ledger.targets.push(created.body.id);
        const base = Array.from({ length: BASE_MEMBERS }, (_, k) => `i${iteration}t${t}base_${k}`);
        const request = { kind: "add", iteration, setup: true, audienceId: created.body.id, ids: base } as const;
        await execute(ledger, live, apiKey, ws, { ...request, withData: false, sentAt: 0 });
      }
      const setupFailures = ledger.requests.filter((r) => r.iteration === iteration && r.ackedAt === undefined);
      expect(setupFailures.map((r) => `${r.status} ${r.failure}`)).toEqual([]);

      // The stream: IN_FLIGHT clients, each sending its next request as soon as one is answered.
      let stopping = false;
      let sequence = 0;
      const next = (): LedgerRequest => {
        const n = ++sequence;
        const roll = random();
        if (roll < 0.2) {
          const [a, b] = sample(targets, 2);
          return { kind: "merge", iteration, name: `merge ${iteration}.${n}`, sources: [a ?? "", b ?? ""], sentAt: 0 };
        }
        const withData = roll < 0.4;
        const size = withData ? between(500, 1500) : between(2000, 4000);
        const ids = Array.from({ length: size }, (_, k) => `i${iteration}r${n}_${k}`);
        return { kind: "add", iteration, audienceId: pick(targets), ids, withData, sentAt: 0 };
      };
      const clients = Array.from({ length: IN_FLIGHT }, async () => {
        while (!stopping) await execute(ledger, live, apiKey, ws, next());
      });
      // The kill comes at a random moment after a random number of answers, so that every
      // iteration has acknowledged requests however fast this machine is (the cap keeps it bounded).
      const started = Date.now();
      const answersBeforeKill = between(1, 6);
      const answered = () => ledger.requests.filter((r) => r.iteration === iteration && !r.setup && r.ackedAt).length;
      while (answered() < answersBeforeKill && Date.now() - started < 15_000) await sleep(10);
      await sleep(between(0, 800));
      const killAfter = Date.now() - started;
      stopping = true;
      await killProcessGroup(live);
      await Promise.all(clients);
      // Nothing of the killed process may still answer on its port.
      await expect(fetch(`${live.baseUrl}/healthz`)).rejects.toThrow();

      server = await startServerProcess(storeEnv);
      expect(server.firstStart, "a restart must not create another workspace").toBeUndefined();
      const check = await verify(ledger, server, apiKey, ws);
      lost += check.lost;
      partial += check.partial;
      problems.push(...check.problems.map((p) => `after kill ${iteration}: ${p}`));

      const streamed = ledger.requests.filter((r) => r.iteration === iteration && !r.setup);
      const acked = streamed.filter((r) => r.ackedAt !== undefined);
      const unacked = streamed.filter((r) => r.ackedAt === undefined);
      verifications.push(
        `kill ${iteration} at ${killAfter} ms: ${streamed.length} requests sent ` +
          `(${streamed.filter((r) => r.kind === "merge").length} merges), ${acked.length} acknowledged, ` +
          `${unacked.length} unacknowledged (${unacked.filter((r) => r.observed === "full").length} found committed, ` +
          `${unacked.filter((r) => r.observed === "none").length} absent)`,
      );
    }

    const live: ServerProcess = server;
    const streamed = ledger.requests.filter((r) => !r.setup);
    const refused = streamed.filter((r) => r.status !== undefined && r.ackedAt === undefined);
    const violations = streamed.filter(
      (r) => r.failure?.startsWith("Response breaks the contract") || r.failure?.startsWith("acknowledged"),
    );
    console.log(
      [
        `crash safety on the ${storeName} (seed ${seed}):`,
        ...verifications.map((v) => `  ${v}`),
        `  iterations (SIGKILLs): ${ITERATIONS}`,
        `  requests: ${streamed.length} streamed (+${ITERATIONS * TARGETS_PER_ITERATION} setup adds), ` +
          `${streamed.filter((r) => r.ackedAt !== undefined).length} acknowledged, ` +
          `${streamed.filter((r) => r.ackedAt === undefined).length} unacknowledged`,
        `  member ids written: ${ledger.ownerOf.size}`,
        `  requests lost: ${lost}`,
        `  partial requests: ${partial}`,
        `  refused requests (non-2xx): ${refused.length}`,
      ].join("\n"),
    );
    expect(problems).toEqual([]);
    expect(lost).toBe(0);
    expect(partial).toBe(0);
    expect(refused.map((r) => `${r.status} ${r.failure ?? ""}`)).toEqual([]);
    expect(violations.map((r) => r.failure)).toEqual([]);
    expect(streamed.filter((r) => r.ackedAt !== undefined).length).toBeGreaterThan(0);

    // The store still works after the last crash: a write is accepted and read back.
    const after = await send(live, apiKey, "POST", `${ws}/audiences/${ledger.targets[0]}/members`, {
      memberIds: ["after-the-crashes"],
    });
    expect(after.body).toEqual({ added: 1, alreadyMembers: 0, created: 1, merged: 0 });
    await stopServerProcess(live);
    server = undefined;
  }, 600_000);
});
