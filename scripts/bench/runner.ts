// Which scenarios of the registry a run runs, in the registry's order, and running them: each is
// given the set-ups it declared, and its rows are recorded under its name.
import type { BenchOptions } from "./options.ts";
import { SCENARIOS } from "./registry.ts";
import type { ResultRow } from "./report.ts";
import type { Made, Need, Scenario, Setups } from "./scenario.ts";
import type { Context } from "./scenarios/scenario-context.ts";
import type { Resources } from "./session.ts";

export interface Plan {
  scenarios: Scenario[];
  /** Why a scenario runs although not selected, or is left out although selected. */
  notes: string[];
}

/**
 * The scenarios selected (--only, less --skip, less those whose `when` says no), with the ones
 * making what they need, even if not selected themselves. A scenario whose maker was left out by
 * --skip (or its `when`) is left out too.
 */
export function plan(opts: BenchOptions, scenarios: readonly Scenario[] = SCENARIOS): Plan {
  const excluded = (s: Scenario) => opts.skip.has(s.name) || !(s.when?.(opts) ?? true);
  const selected = (s: Scenario) => !excluded(s) && (opts.only.size === 0 || opts.only.has(s.name));
  const makers = new Map(scenarios.filter((s) => s.makes).map((s) => [s.makes as Made, s]));
  const running = new Set(scenarios.filter(selected));
  const notes: string[] = [];
  for (let changed = true; changed; ) {
    changed = false;
    for (const s of running) {
      for (const need of s.needs) {
        const maker = makers.get(need as Made);
        if (!maker || running.has(maker)) continue;
        if (excluded(maker)) {
          running.delete(s);
          notes.push(`${s.name} left out: it needs ${need}, made by ${maker.name}, which is left out`);
        } else {
          running.add(maker);
          notes.push(`${maker.name} runs: ${s.name} needs its ${need}`);
        }
        changed = true;
        break;
      }
    }
  }
  return { scenarios: scenarios.filter((s) => running.has(s)), notes };
}

export interface Recorded {
  scenario: string;
  row: ResultRow;
}

/**
 * Runs the planned scenarios in order, recording each one's rows into `recorded` as it ends
 * (so that a failed run still reports what it measured).
 */
export async function runScenarios(
  planned: Plan,
  ctx: Context,
  resources: Resources,
  recorded: Recorded[],
): Promise<void> {
  const made: Partial<Setups> = {};
  for (const scenario of planned.scenarios) {
    const given: Partial<Record<Need, unknown>> = {};
    const acquired: Need[] = [];
    const from = ctx.rows.length;
    try {
      for (const need of [...scenario.needs, ...scenario.uses]) {
        if (need in resources) {
          given[need] = await resources[need as keyof Resources].acquire();
          acquired.push(need);
        } else {
          given[need] = made[need];
        }
        if (given[need] === undefined && scenario.needs.includes(need)) {
          throw new Error(`${scenario.name} needs ${need}, which the run does not have`);
        }
      }
      const result = await scenario.run(ctx, given as Partial<Setups>);
      if (scenario.makes) Object.assign(made, { [scenario.makes]: result });
    } finally {
      for (const row of ctx.rows.slice(from)) recorded.push({ scenario: scenario.name, row });
      for (const need of acquired.reverse()) await resources[need as keyof Resources].release?.();
    }
  }
}
