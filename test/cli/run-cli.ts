import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";

/** The real entry, as `npx audience-service` runs it: the SDK package's bin, on its build. */
export const CLI_ENTRY = fileURLToPath(new URL("../../packages/client/bin/audience-service.mjs", import.meta.url));

export interface CliRun {
  child: ChildProcess;
  /** Resolves once stderr has printed text matching the pattern (for acting on the CLI mid-run). */
  stderrMatches(pattern: RegExp): Promise<void>;
  /** The exit code (a signal death is reported as 128 + its number) and everything printed. */
  result: Promise<{ code: number; stdout: Buffer; stderr: string }>;
}

/**
 * Runs the CLI as a child process with pipes for stdout and stderr (so not on a terminal, as in
 * CI) and only the environment given: the developer's own API_KEY must not leak into a test.
 */
export function startCli(args: string[], env: Record<string, string | undefined> = {}, cwd?: string): CliRun {
  const child = spawn(process.execPath, [CLI_ENTRY, ...args], {
    cwd,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const stdout: Buffer[] = [];
  let stderr = "";
  const waiters: Array<{ pattern: RegExp; resolve: () => void }> = [];
  child.stdout?.on("data", (chunk: Buffer) => stdout.push(chunk));
  child.stderr?.setEncoding("utf8").on("data", (text: string) => {
    stderr += text;
    for (const waiter of waiters.filter((w) => w.pattern.test(stderr))) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  });
  const result = once(child, "close").then(([code, signal]) => ({
    code: (code as number | null) ?? 128 + (signal === "SIGINT" ? 2 : 9),
    stdout: Buffer.concat(stdout),
    stderr,
  }));
  return {
    child,
    stderrMatches: (pattern) =>
      pattern.test(stderr)
        ? Promise.resolve()
        : Promise.race([
            new Promise<void>((resolve) => waiters.push({ pattern, resolve })),
            result.then(({ stderr: text }) => {
              throw new Error(`the CLI ended before printing ${pattern}; stderr:\n${text}`);
            }),
          ]),
    result,
  };
}

/** Runs the CLI to its end. */
export function runCli(args: string[], env: Record<string, string | undefined> = {}, cwd?: string) {
  return startCli(args, env, cwd).result;
}
