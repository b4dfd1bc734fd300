// The benchmark's scenarios, declared: what each measures, the shared set-ups it needs (made by an
// earlier scenario, or by the runner), and the targets (targets.ts) its rows are judged by. They
// run in this order: later ones read data the earlier ones leave (the import and the insight
// scenarios run late, so that their members do not sit in the search scenario's index).

import { type Scenario, scenario } from "./scenario.ts";
import { activities } from "./scenarios/activities.ts";
import { audienceRule } from "./scenarios/audience-rule.ts";
import { bulkAddNew } from "./scenarios/bulk-add.ts";
import { bulkAddWithData } from "./scenarios/bulk-add-with-data.ts";
import { clockTick } from "./scenarios/clock-tick.ts";
import { feedPages } from "./scenarios/events.ts";
import { exportMembers } from "./scenarios/exports.ts";
import { getThroughput, getThroughputRateLimited } from "./scenarios/get-throughput.ts";
import { importCsv } from "./scenarios/import-csv.ts";
import { insightRules } from "./scenarios/insight-rules.ts";
import { insightSizes } from "./scenarios/insight-sizes.ts";
import { tenantIsolation } from "./scenarios/isolation.ts";
import { manyAudiences } from "./scenarios/many-audiences.ts";
import { membershipHistory } from "./scenarios/membership-history.ts";
import { mergeAudiences } from "./scenarios/merge.ts";
import { mixedLoad } from "./scenarios/mixed-load.ts";
import { numericRule } from "./scenarios/numeric-rule.ts";
import { pages } from "./scenarios/pages.ts";
import { replicaReads } from "./scenarios/replicas.ts";
import { ruleBounds } from "./scenarios/rule-bounds.ts";
import { ruleChains } from "./scenarios/rule-chains.ts";
import { ruleChange } from "./scenarios/rule-change.ts";
import { scatteredUpdates } from "./scenarios/scattered-updates.ts";
import { search } from "./scenarios/search.ts";
import { snapshotAudience } from "./scenarios/snapshot.ts";
import { webhookDelivery } from "./scenarios/webhooks.ts";

export const SCENARIOS: readonly Scenario[] = [
  scenario({
    name: "bulk",
    what: "--size new members into one audience by id, --batch per request",
    makes: "bigAudience",
    targets: ["bulk_add_new_ids"],
    run: (ctx) => bulkAddNew(ctx),
  }),
  scenario({
    name: "pages",
    what: "a page of 100 members at depth 0, 50% and 99% of the big audience, with totalCount",
    needs: ["bigAudience"],
    targets: ["page_depth", "page_deep_vs_first"],
    run: (ctx, { bigAudience }) => pages(ctx, bigAudience),
  }),
  scenario({
    name: "throughput",
    what: "GET …/audiences/:id under load, beside a bare Fastify route (and that route + its SQL)",
    needs: ["bigAudience"],
    makes: "bareRoute",
    targets: ["get_audience_throughput"],
    run: (ctx, { bigAudience }) => getThroughput(ctx, bigAudience),
  }),
  scenario({
    name: "data",
    what: "--data-size members with e-mail and 4 fields, half of them merged, into a new audience",
    makes: "dataAudience",
    targets: ["bulk_add_with_data_merge"],
    run: (ctx) => bulkAddWithData(ctx),
  }),
  scenario({
    name: "export",
    what: "an audience as CSV (the big one; the one with data when made), beside COPY TO STDOUT",
    needs: ["bigAudience"],
    uses: ["dataAudience"],
    targets: ["export_csv"],
    run: (ctx, { bigAudience, dataAudience }) => exportMembers(ctx, bigAudience, dataAudience),
  }),
  scenario({
    name: "merge",
    what: "two audiences of half the big workspace each, overlapping by half, merged",
    needs: ["bigAudience"],
    targets: ["merge_audiences"],
    run: (ctx) => mergeAudiences(ctx),
  }),
  scenario({
    name: "snapshot",
    what: "a snapshot of the big audience",
    needs: ["bigAudience"],
    targets: ["snapshot_audience"],
    run: (ctx, { bigAudience }) => snapshotAudience(ctx, bigAudience),
  }),
  scenario({
    name: "rules",
    what: "a rule set, then changed, on an audience of the big workspace",
    needs: ["bigAudience"],
    targets: ["filter_recompute"],
    run: (ctx) => ruleChange(ctx),
  }),
  // Before updates and rule-chains, whose members only the service's store holds (the updates'
  // leave dead rows there too): here both sides' scans read the same rows.
  scenario({
    name: "numeric-rule",
    what: "a number field declared over --size members with a score, then the rule score > 50 set",
    needs: ["storeWriter"],
    targets: ["numeric_rule"],
    run: (ctx, { storeWriter }) => numericRule(ctx, storeWriter),
  }),
  // A tick is no request: it runs in the bench process, on the service's database, which only
  // PostgreSQL lets a second process open (serviceStore).
  scenario({
    name: "clock-tick",
    what: "a clock tick of 10 withinLast audiences over --size members with a date: nobody crossing, then ~1,000",
    needs: ["storeWriter", "serviceStore"],
    targets: ["clock_tick_idle", "clock_tick_crossing"],
    when: (opts) => opts.store === "postgres",
    run: (ctx, { storeWriter, serviceStore }) => clockTick(ctx, storeWriter, serviceStore),
  }),
  // Issue 46's activities, in a workspace of their own; the clock ticks run in this process, on
  // the service's database (PostgreSQL only: without it, the ticks are left out).
  scenario({
    name: "activities",
    what: "--activities activities over --size members: ingests, one per request, a rule set, clock ticks, a timeline page, bytes per activity",
    needs: ["storeWriter"],
    uses: ["serviceStore"],
    targets: [
      "activity_ingest",
      "activity_ingest_with_rules",
      "activity_ingest_one",
      "activity_rule_written",
      "activity_clock_idle",
      "activity_clock_crossing",
      "activity_timeline",
      "activity_storage",
    ],
    run: (ctx, { storeWriter, serviceStore }) => activities(ctx, storeWriter, serviceStore),
  }),
  scenario({
    name: "updates",
    what: "member data changed (1,000 spread, 1,000 consecutive, single PATCHes) under 100 rule audiences",
    needs: ["bigAudience"],
    targets: ["update_spread", "patch_member_with_rules"],
    run: (ctx) => scatteredUpdates(ctx),
  }),
  scenario({
    name: "rule-chains",
    what: "PATCH one member under 100 rules, 20 of them audience rules in chains 3 deep, beside 100 field rules",
    targets: ["patch_rule_chains"],
    run: (ctx) => ruleChains(ctx),
  }),
  scenario({
    name: "rule-bounds",
    what: "an upsert of 10,000 members, one member added and 5,000 removed, under rules at every workspace bound (≤ 200,000 members)",
    targets: ["rule_bounds_upsert", "rule_bounds_add_one"],
    run: (ctx) => ruleBounds(ctx),
  }),
  scenario({
    name: "audience-rule",
    what: "the rule in A ∧ notIn B set, A and B two audiences of half the big workspace overlapping by half",
    needs: ["bigAudience"],
    targets: ["audience_rule", "audience_rule_written"],
    run: (ctx) => audienceRule(ctx),
  }),
  scenario({
    name: "feed",
    what: "a page of 100 events at the start, middle and end of a feed of 1,000,000 (--quick 20,000)",
    needs: ["storeWriter"],
    targets: ["feed_page"],
    run: (ctx, { storeWriter }) => feedPages(ctx, storeWriter),
  }),
  scenario({
    name: "audiences",
    what: "listAudiences of 10,000 audiences (--quick 2,000), and one member's audiences among them",
    needs: ["storeWriter"],
    targets: ["list_audiences"],
    run: (ctx, { storeWriter }) => manyAudiences(ctx, storeWriter),
  }),
  scenario({
    name: "search",
    what: "search= of a rare and a common term among --size members with data",
    needs: ["storeWriter"],
    targets: ["search_rare", "search_common"],
    run: (ctx, { storeWriter }) => search(ctx, storeWriter),
  }),
  scenario({
    name: "mixed",
    what: "50 workspaces, 20 clients, 80% pages and 20% adds; again on two server processes",
    uses: ["secondProcess"],
    targets: ["mixed_load"],
    run: (ctx, { secondProcess }) => mixedLoad(ctx, secondProcess),
  }),
  scenario({
    name: "webhooks",
    what: "delivery latency and rate to a receiver, API latency while deliveries hang",
    needs: ["bigAudience", "receivers"],
    targets: ["webhook_latency", "webhook_throughput", "api_latency_with_backlog"],
    run: (ctx, { bigAudience, receivers }) => webhookDelivery(ctx, bigAudience, receivers),
  }),
  scenario({
    name: "import",
    what: "a CSV file of --size new members imported, beside COPY FROM STDIN, with the server's peak RSS",
    targets: ["import_csv", "import_peak_rss"],
    run: (ctx) => importCsv(ctx),
  }),
  // After the import, so that the million members each writes into the service's store alone
  // (the raw baseline's database gets only what its baselines read) weigh on no earlier scenario.
  scenario({
    name: "insight-sizes",
    what: "the overlap of 20 audiences over --size members, a history of 400 days, a page of 100 with include=stats",
    needs: ["storeWriter"],
    targets: ["insight_overlap", "insight_history", "insight_list_stats"],
    run: (ctx, { storeWriter }) => insightSizes(ctx, storeWriter),
  }),
  scenario({
    name: "membership-history",
    what: "a page of 100 as of 200 days ago beside the current page, and changes over 1 and 30 days, with 400 days of record",
    needs: ["bigAudience", "storeWriter"],
    targets: ["history_as_of_page", "history_changes_day", "history_changes_month"],
    run: (ctx, { bigAudience, storeWriter }) => membershipHistory(ctx, bigAudience, storeWriter),
  }),
  scenario({
    name: "insight-rules",
    what: "a dry run and nodeCounts of a 10-condition rule over --size members, beside its preview; an explanation",
    needs: ["storeWriter"],
    targets: ["insight_dry_run", "insight_node_counts", "insight_explanation"],
    run: (ctx, { storeWriter }) => insightRules(ctx, storeWriter),
  }),
  // Its own workspaces; last of those on the run's server, so that the noisy key's audiences,
  // merges and stalled exports weigh on no other scenario. Tiny with --quick (2,000 members, each
  // reproduction --duration long).
  scenario({
    name: "isolation",
    what: "a victim's cheap requests while a noisy key of another workspace (up to 200,000 members) runs each heavy request of issue 'One key cannot freeze everyone'",
    targets: ["tenant_isolation"],
    run: (ctx) => tenantIsolation(ctx),
  }),
  // Its own primary, replica and server processes: nothing of the run's store. Left out of --quick
  // (the clusters and four server processes take a minute or two).
  scenario({
    name: "replicas",
    what: "a page and getAudience with one replica (no token, a fresh token) beside primary-only; the mixed load's primary CPU",
    targets: ["replica_read_no_token", "replica_read_fresh_token"],
    when: (opts) => opts.store === "postgres" && !opts.quick,
    run: (ctx) => replicaReads(ctx),
  }),
  scenario({
    name: "memory",
    what: "the server's memory at its first start, after a restart, and at its peak over the run",
    needs: ["serverMemory"],
    uses: ["bareRoute"],
    targets: ["server_peak_rss"],
    run: async (ctx, { serverMemory, bareRoute }) => {
      ctx.rows.push(...serverMemory(bareRoute?.rssMb));
    },
  }),
  scenario({
    name: "rate-limited",
    what: "GET …/audiences/:id throughput again, on the server restarted with rate limiting on",
    needs: ["bigAudience", "bareRoute", "rateLimitedServer"],
    when: (opts) => opts.rateLimitedRun,
    run: (ctx, { bigAudience, bareRoute }) => getThroughputRateLimited(ctx, bigAudience, bareRoute.rps),
  }),
];

export const SCENARIO_NAMES = SCENARIOS.map((s) => s.name);
