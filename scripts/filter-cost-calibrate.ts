// Times filters of known shapes on a workspace of --size members (default 200,000) on the
// embedded store, each beside a baseline (an `any` of 10 eq), with the ratio filter-cost.ts
// predicts, to fit its weights and FILTER_COST_BUDGET:
//   npx tsx scripts/filter-cost-calibrate.ts [--size 200000] [--budget 0] [--rounds 3]
// --worst times instead the costliest filters the default budget accepts at --size, and the
// issue's two previews, which it refuses.
// --budget 0 lifts the bound for the run, so that refused shapes are timed too.
import { parseArgs } from "node:util";
import { buildApp } from "../src/app.ts";
import { CONFIGURATION } from "../src/config/configuration.ts";
import { resolveSettings } from "../src/config/settings.ts";
import { parseFilter } from "../src/features/membership/rules/filter.ts";
import { conditionCosts, WORK_FACTORS } from "../src/features/membership/rules/filter-cost.ts";
import { openStore } from "../src/platform/db/database.ts";

const { values } = parseArgs({
  options: {
    size: { type: "string" },
    budget: { type: "string" },
    rounds: { type: "string" },
    worst: { type: "boolean" },
  },
});
const size = Number(values.size ?? 200_000);
const budget = values.budget === undefined ? undefined : Number(values.budget);
const ADMIN = "calibration-admin-token-0123456789";

const store = await openStore({});
const app = await buildApp({
  store,
  workers: false,
  settings: {
    http: { adminToken: ADMIN },
    rateLimit: { perMinute: 0 },
    ...(budget === undefined ? {} : { rules: { costBudget: budget } }),
  },
});
const ask = async (method: string, url: string, token: string, body?: unknown) => {
  const response = await app.inject({
    method: method as "POST",
    url,
    headers: { authorization: `Bearer ${token}` },
    payload: body as object,
  });
  return { status: response.statusCode, body: response.json() as Record<string, unknown> };
};
const workspace = (await ask("POST", "/v0/workspaces", ADMIN, { name: "calibration" })).body as { id: string };
const key = (await ask("POST", `/v0/workspaces/${workspace.id}/api-keys`, ADMIN, { name: "k" })).body as {
  key: string;
};
const base = `/v0/workspaces/${workspace.id}`;
await store.db.$executeRawUnsafe(
  `INSERT INTO members (workspace_id, id, seq, created_at, fields, folded)
   SELECT $1, 'm' || n, n, timestamp '2026-01-01' + n * interval '1 millisecond', f,
          jsonb_build_object('id', 'm' || n, 'email', 'm' || n || '@example.com',
            'emails', jsonb_build_array('m' || n || '@example.com', 'alt' || n || '@example.org'), 'fields', f)
   FROM (SELECT n, jsonb_build_object('company', 'co' || (n * 31) % 10, 'role', 'r' || (n * 17) % 5,
           'country', (ARRAY['de', 'fr', 'it', 'uk', 'us'])[(n * 13) % 5 + 1],
           'score', ((n::int8 * 7919) % 1000 / 10) || '.' || ((n::int8 * 7919) % 10)) AS f
         FROM generate_series(1, $2::int) AS n) AS s`,
  workspace.id,
  size,
);
await store.db.$executeRawUnsafe(`UPDATE workspaces SET member_seq = $2 WHERE workspace_id = $1`, workspace.id, size);
await store.db.$executeRawUnsafe("ANALYZE members");
await ask("PUT", `${base}/fields/score`, key.key, { type: "number" });
const audience = (await ask("POST", `${base}/audiences`, key.key, { name: "A" })).body as { id: string };
await ask("PUT", `${base}/audiences/${audience.id}/filter`, key.key, {
  filter: { field: "fields.company", op: "eq", value: "co1" },
});

const empty = (await ask("POST", `${base}/audiences`, key.key, { name: "Empty" })).body as { id: string };
// Every shape is an `any` of conditions no member meets, so that every condition is evaluated for
// every member: the worst case of its cost, which an `all` of conditions every member meets shares.
// Values differ from condition to condition: PostgreSQL drops an `any`'s repeated conditions.
const long = (i: number) => `${i}`.padEnd(1_024, "x");
const values100 = (i: number) => Array.from({ length: 100 }, (_, v) => `v${i}-${v}`);
const any10 = (make: (i: number) => unknown) => ({ any: Array.from({ length: 10 }, (_, i) => make(i)) });
const shapes: Record<string, unknown> = {
  "10 eq": any10((i) => ({ field: "fields.company", op: "eq", value: `none${i}` })),
  "1 eq": { field: "fields.company", op: "eq", value: "none" },
  "10 in of 100 values": any10((i) => ({ field: "fields.company", op: "in", value: values100(i) })),
  "10 contains of 1,024": any10((i) => ({ field: "fields.company", op: "contains", value: long(i) })),
  "10 anyEmail eq": any10((i) => ({ field: "anyEmail", op: "eq", value: `none${i}` })),
  "10 anyEmail contains of 1,024": any10((i) => ({ field: "anyEmail", op: "contains", value: long(i) })),
  "10 score gt": any10((i) => ({ field: "fields.score", op: "gt", value: String(1000 + i) })),
  "10 createdAt before": any10((i) => ({ field: "createdAt", op: "before", value: `${1990 + i}-01-01` })),
  "10 audience in": any10((i) => ({
    field: "audience",
    op: i % 2 ? "in" : "notIn",
    value: i % 2 ? empty.id : audience.id,
  })),
};

if (values.worst) {
  // The costliest filters the budget accepts at this size, and the issue's, timed once each.
  const costBudget = resolveSettings({}).rules.costBudget ?? CONFIGURATION.settings.rules.costBudget.byStore.embedded;
  const simple = (count: number) => ({
    any: Array.from({ length: count }, (_, i) => ({ field: "fields.company", op: "eq", value: `none${i}` })),
  });
  const most = (factor: number) => Math.min(100, Math.floor(costBudget / factor / size));
  const issue = {
    all: Array.from({ length: 100 }, (_, i) => ({ field: "fields.role", op: "notIn", value: [`none${i}`] })),
  };
  const emails = {
    any: Array.from({ length: 100 }, (_, i) => ({ field: "anyEmail", op: "contains", value: long(i) })),
  };
  for (const [name, filter, nodeCounts] of [
    [`${most(1)} eq in an any, a preview`, simple(most(1)), false],
    [`${most(1.25)} eq in an any, with nodeCounts`, simple(most(1.25)), true],
    ["100 notIn, with nodeCounts (the issue's)", issue, true],
    ["100 anyEmail contains of 1,024 (the issue's)", emails, false],
  ] as const) {
    const started = performance.now();
    const answer = await ask("POST", `${base}/audiences/preview`, key.key, { filter, limit: 10, nodeCounts });
    const ms = performance.now() - started;
    console.log(
      `${name} | ${answer.status} | ${(ms / 1000).toFixed(2)} s | ${answer.status === 400 ? answer.body.detail : ""}`,
    );
  }
  await app.close();
  await store.close();
  process.exit(0);
}

// Each run beside a run of the baseline, alternating, so that both see the same load: the ratio
// of the two, as the median of ROUNDS, is what the model's weights are fitted to.
const ROUNDS = Number(values.rounds ?? 3);
const BASELINE = shapes["10 eq"];
const run = async (filter: unknown, mode: "preview" | "nodeCounts" | "dryRun") => {
  const started = performance.now();
  const answer =
    mode === "dryRun"
      ? await ask("POST", `${base}/audiences/${audience.id}/filter/preview`, key.key, { filter })
      : await ask("POST", `${base}/audiences/preview`, key.key, {
          filter,
          limit: 10,
          nodeCounts: mode === "nodeCounts",
        });
  return { ms: performance.now() - started, answer };
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const types = new Map([["score", "number" as const]]);
const baselineCost = conditionCosts(parseFilter(BASELINE, { types }), types, "").reduce((a, c) => a + c.cost, 0);
for (const [name, filter] of Object.entries(shapes)) {
  for (const mode of ["preview", "nodeCounts", "dryRun"] as const) {
    const ratios: number[] = [];
    const times: number[] = [];
    let status = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const baseline = await run(BASELINE, "preview");
      const shape = await run(filter, mode);
      status = shape.answer.status;
      ratios.push(shape.ms / baseline.ms);
      times.push(shape.ms);
    }
    const cost = conditionCosts(parseFilter(filter, { types }), types, "").reduce((a, c) => a + c.cost, 0);
    const modelled = (cost * WORK_FACTORS[mode]) / baselineCost;
    console.log(
      `${name} | ${mode} | ${status} | ${(median(times) / 1000).toFixed(2)} s | ${median(ratios).toFixed(2)}x the baseline | model ${modelled.toFixed(2)}x (${(cost * WORK_FACTORS[mode]).toFixed(1)} per member)`,
    );
  }
}
await app.close();
await store.close();
