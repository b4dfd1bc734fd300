// The noisy key's reproductions for the isolation scenario (isolation.ts): each sets up what it
// needs (not measured), then sends its heavy requests one after another for `seconds` (at least
// one), and says what they answered. Whatever the server answers is an outcome to report.
import http from "node:http";
import { performance } from "node:perf_hooks";
import { setTimeout as delay } from "node:timers/promises";
import type { Client } from "../http.ts";
import { summarize } from "../stats.ts";
import { range } from "./member-ids.ts";
import { type Context, ws } from "./scenario-context.ts";

/** A request's outcome: its status (0 when no answer came in time), problem code, milliseconds. */
export interface Outcome {
  status: number;
  code?: string | undefined;
  ms: number;
  /** The id an answer names (a created audience's). */
  id?: string | undefined;
}

/** One request through `client`, whatever it answers; a timeout or a cut connection is status 0. */
export async function attempt(client: Client, method: string, path: string, body?: unknown): Promise<Outcome> {
  const started = performance.now();
  try {
    const res = await client.request<{ code?: string; id?: string } | string>(method, path, body);
    const answer = typeof res.body === "object" && res.body !== null ? res.body : {};
    return { status: res.status, code: answer.code, ms: res.ms, id: answer.id };
  } catch {
    return { status: 0, ms: performance.now() - started };
  }
}

const shown = (ms: number) => (ms >= 1_000 ? `${(ms / 1_000).toFixed(1)} s` : `${Math.round(ms)} ms`);

/** Outcomes tallied: "201 ×3, 422 filter_too_large ×1 (p50 1.2 s, max 2.0 s)". */
export function tally(outcomes: Outcome[]): string {
  if (outcomes.length === 0) return "none";
  const counts = new Map<string, number>();
  for (const { status, code } of outcomes) {
    const key = status === 0 ? "no answer" : code && status >= 400 ? `${status} ${code}` : String(status);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const times = summarize(outcomes.map((o) => o.ms));
  const all = [...counts].map(([key, n]) => `${key} ×${n}`).join(", ");
  return `${all} (p50 ${shown(times.median)}, max ${shown(times.max)})`;
}

/** The noisy workspace, its key's client, and the bounds its requests keep to. */
export interface Noisy {
  ctx: Context;
  workspaceId: string;
  members: number;
  api: Client;
  /** Two more keys of the workspace, one for each stalled export. */
  exportKeys: string[];
  seconds: number;
  quick: boolean;
}

export interface Victim {
  id: string;
  audienceId: string;
  api: Client;
}

interface Reproduction<S> {
  name: string;
  what: string;
  setUp(noisy: Noisy): Promise<S>;
  run(noisy: Noisy, ready: S, victim: Victim): Promise<string>;
}

const reproduction = <S>(r: Reproduction<S>) => r as Reproduction<unknown>;

/** `send(i)` for i = 0, 1, … until `seconds` have passed (at least once, at most 10,000 times). */
async function repeat(noisy: Noisy, send: (i: number) => Promise<Outcome>): Promise<Outcome[]> {
  const until = Date.now() + noisy.seconds * 1_000;
  const outcomes: Outcome[] = [];
  for (let i = 0; i < 10_000 && (i === 0 || Date.now() < until); i++) outcomes.push(await send(i));
  return outcomes;
}

/**
 * Set-up requests, given up once the set-up has taken ten times the reproduction's time (at least
 * 60 s; 10 s with --quick): on a server without bounds, one of them can take most of a minute.
 */
async function setUpAll(noisy: Noisy, requests: (() => Promise<Outcome>)[]): Promise<string> {
  const until = Date.now() + Math.max(noisy.quick ? 10 : 60, 10 * noisy.seconds) * 1_000;
  const outcomes: Outcome[] = [];
  for (const request of requests) {
    if (Date.now() > until) break;
    outcomes.push(await request());
  }
  const cut = outcomes.length < requests.length ? ` (cut at ${outcomes.length} of ${requests.length})` : "";
  return `set-up ${tally(outcomes)}${cut}`;
}

const base = (noisy: Noisy) => ws(noisy.ctx, noisy.workspaceId);
const audienceIn = (id: string) => ({ field: "audience", op: "in", value: id });

async function audiences(noisy: Noisy, prefix: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const path = `${base(noisy)}/audiences`;
    ids.push((await noisy.api.call<{ id: string }>("POST", path, { name: `${prefix} ${i}` }, 201)).body.id);
  }
  return ids;
}

const setFilter = (noisy: Noisy, id: string, filter: unknown) => () =>
  attempt(noisy.api, "PUT", `${base(noisy)}/audiences/${id}/filter`, { filter });

const preview = (noisy: Noisy, body: unknown) => attempt(noisy.api, "POST", `${base(noisy)}/audiences/preview`, body);

/** An export of every noisy member whose client reads the headers and then nothing. */
function stalledExport(noisy: Noisy, key: string) {
  const { baseUrl } = noisy.ctx.service;
  const req = http.request(`${baseUrl}${base(noisy)}/members`, {
    agent: false,
    headers: { authorization: `Bearer ${key}`, accept: "text/csv" },
    timeout: 10_000,
  });
  const status = new Promise<number>((resolve) => {
    req.on("error", () => resolve(0));
    req.on("timeout", () => req.destroy());
    req.on("response", (res) => {
      res.pause();
      res.on("error", () => {});
      resolve(res.statusCode ?? 0);
    });
  });
  req.end();
  return { status, stop: () => req.destroy() };
}

export const reproductions = [
  reproduction({
    name: "rule_layers",
    what: "previews the top of 10 layers × 6 audiences (4 × 3 with --quick), each naming all of the layer below",
    async setUp(noisy) {
      const [depth, width] = noisy.quick ? [4, 3] : [10, 6];
      const layers: string[][] = [];
      const requests: (() => Promise<Outcome>)[] = [];
      for (let layer = 0; layer < depth; layer++) {
        const ids = await audiences(noisy, `Layer ${layer}`, width);
        const below = layers.at(-1);
        for (const [j, id] of ids.entries()) {
          const filter = below ? { any: below.map(audienceIn) } : { field: "fields.plan", op: "eq", value: `p${j}` };
          requests.push(setFilter(noisy, id, filter));
        }
        layers.push(ids);
      }
      return { top: layers.at(-1) as string[], setUp: await setUpAll(noisy, requests) };
    },
    async run(noisy, { top, setUp }) {
      const outcomes = await repeat(noisy, () => preview(noisy, { filter: { any: top.map(audienceIn) }, limit: 1 }));
      return `${tally(outcomes)}; ${setUp}`;
    },
  }),
  reproduction({
    name: "not_in",
    what: "previews 100 notIn conditions of 100 values each, with nodeCounts",
    setUp: async () => undefined,
    async run(noisy) {
      const filter = (i: number) => ({
        all: range(0, 100, (c) => ({
          field: "fields.company",
          op: "notIn",
          value: range(0, 100, (v) => `Company ${i}-${c}-${v}`),
        })),
      });
      return tally(await repeat(noisy, (i) => preview(noisy, { filter: filter(i), nodeCounts: true, limit: 1 })));
    },
  }),
  reproduction({
    name: "email_contains",
    what: "previews 100 anyEmail contains of 1,024 characters",
    setUp: async () => undefined,
    async run(noisy) {
      const filter = (i: number) => ({
        any: range(0, 100, (c) => ({ field: "anyEmail", op: "contains", value: `${i}.${c}.`.padEnd(1_024, "ab") })),
      });
      return tally(await repeat(noisy, (i) => preview(noisy, { filter: filter(i), limit: 1 })));
    },
  }),
  reproduction({
    name: "merge_doubling",
    what: "merges two audiences again and again, doubling their rule each round",
    async setUp(noisy) {
      const pair = await audiences(noisy, "Doubling", 2);
      const rule = (k: number) => ({
        any: range(0, 10, (c) => ({ field: "fields.company", op: "eq", value: `Company ${k * 10 + c}` })),
      });
      return {
        pair,
        setUp: await setUpAll(
          noisy,
          pair.map((id, k) => setFilter(noisy, id, rule(k))),
        ),
      };
    },
    async run(noisy, { pair, setUp }) {
      // Each round merges the pair twice: the two new audiences, each with the rules of both,
      // are the next round's pair.
      let sources = pair;
      let next: string[] = [];
      let rounds = 0;
      const outcomes = await repeat(noisy, async (i) => {
        const body = { name: `Doubled ${i}`, audienceIds: sources };
        const outcome = await attempt(noisy.api, "POST", `${base(noisy)}/audiences/merge`, body);
        if (outcome.status === 201 && outcome.id) next.push(outcome.id);
        if (i % 2 === 1) {
          if (next.length === 2) {
            sources = next;
            rounds++;
          }
          next = [];
        }
        return outcome;
      });
      return `${tally(outcomes)}; rules of ${10 * 2 ** (rounds + 1)} conditions at the end; ${setUp}`;
    },
  }),
  reproduction({
    name: "hub_member",
    what: "adds one member at a time to an audience that many audiences' rules name",
    async setUp(noisy) {
      const [hub] = await audiences(noisy, "Hub", 1);
      const count = noisy.quick ? 10 : 200;
      const named = await audiences(noisy, "Named hub", count);
      const requests = named.map((id, k) =>
        setFilter(noisy, id, {
          all: [audienceIn(hub as string), { field: "fields.plan", op: "eq", value: `p${k % 6}` }],
        }),
      );
      return { hub: hub as string, count, setUp: await setUpAll(noisy, requests) };
    },
    async run(noisy, { hub, count, setUp }) {
      const outcomes = await repeat(noisy, (i) =>
        attempt(noisy.api, "POST", `${base(noisy)}/audiences/${hub}/members`, {
          memberIds: [`n${String(i % noisy.members).padStart(7, "0")}`],
        }),
      );
      return `${tally(outcomes)}; ${count} audiences name it; ${setUp}`;
    },
  }),
  reproduction({
    name: "stalled_exports",
    what: "holds two exports (two keys) whose readers stalled",
    setUp: async () => undefined,
    async run(noisy, _ready, victim) {
      const stalled = noisy.exportKeys.map((key) => stalledExport(noisy, key));
      try {
        const statuses = await Promise.all(stalled.map((s) => s.status));
        // The victim's own export, once a second meanwhile: refused while the stalled readers hold the places?
        const until = Date.now() + noisy.seconds * 1_000;
        const exports: Outcome[] = [];
        const path = `${ws(noisy.ctx, victim.id)}/audiences/${victim.audienceId}/members`;
        for (let i = 0; i < 600 && (i === 0 || Date.now() < until); i++) {
          const started = performance.now();
          const res = await victim.api.download(path, "text/csv").catch(() => ({ status: 0 }));
          exports.push({ status: res.status, ms: performance.now() - started });
          await delay(1_000);
        }
        return `stalled readers ${statuses.join(", ")}; the victim's exports meanwhile ${tally(exports)}`;
      } finally {
        for (const s of stalled) s.stop();
      }
    },
  }),
  reproduction({
    name: "time_rules",
    what: "PUTs a rule of 100 withinLast conditions on one audience after another",
    async setUp(noisy) {
      return { ids: await audiences(noisy, "Recent", noisy.quick ? 3 : 20) };
    },
    async run(noisy, { ids }) {
      const rule = (i: number) => ({
        any: range(0, 100, (c) => ({ field: "fields.seen", op: "withinLast", value: `P${((c + i) % 100) + 1}D` })),
      });
      const outcomes = await repeat(noisy, (i) => setFilter(noisy, ids[i % ids.length] as string, rule(i))());
      return tally(outcomes);
    },
  }),
];
