import { CONFIGURATION, type Config } from "./configuration.ts";
import { defaultsOf } from "./variable.ts";

export type { Resolve } from "./configuration.ts";

/**
 * The settings of the application and its features, by section, as the composition root hands
 * them out: each feature receives its own section. The environment (config.ts) fills them; a
 * test gives only what it changes (PartialSettings) and resolveSettings fills in the defaults.
 * What each one means and its default: configuration.ts.
 */
export type Settings = Config["settings"];

export type PartialSettings = { [S in keyof Settings]?: Partial<Settings[S]> };

/** Each section of `given` over the defaults; a property given as undefined keeps its default. */
export function resolveSettings(given: PartialSettings = {}): Settings {
  const resolved = defaultsOf(CONFIGURATION.settings) as Record<string, object>;
  for (const [section, values] of Object.entries(given)) {
    const defined = Object.entries(values ?? {}).filter(([, value]) => value !== undefined);
    resolved[section] = { ...resolved[section], ...Object.fromEntries(defined) };
  }
  return resolved as unknown as Settings;
}
