// What a terminal of 80 or 60 columns shows: every line within the width, counts and ids whole.
// The CLI runs in-process on fake terminal streams (a child process on pipes is never a TTY),
// so that progress.ts draws its bar as on a real terminal.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { main } from "../../packages/client/src/cli/main.ts";
import { createProgress } from "../../packages/client/src/cli/progress.ts";
import { cliEnv, useFakeService } from "./fake-service.ts";

/** A stream that says it is a terminal of this width, and keeps what is written to it. */
function fakeTerminal(columns: number) {
  let text = "";
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      text += chunk.toString();
      callback();
    },
  }) as Writable & { isTTY: boolean; columns: number };
  stream.isTTY = true;
  stream.columns = columns;
  return {
    stream: stream as unknown as NodeJS.WriteStream,
    /** The lines as they appear: a carriage return or a move to column 1 starts the line again. */
    lines: () =>
      text
        // biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escape sequences
        .replace(/\r|\x1b\[1G/g, "\n")
        // biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escape sequences
        .replace(/\x1b\[[0-9;?]*[A-Za-z]|\x1b[78]/g, "")
        .split("\n")
        .filter((line) => line !== ""),
  };
}

const startFake = useFakeService();

describe.each([80, 60])("at %i columns", (columns) => {
  it("progress lines keep their counts whole, dropping the speed, the ETA, then the bar", () => {
    for (const [unit, value, total, percent] of [
      ["rows", 4_010_337, 10_000_000, "40%"],
      ["bytes", 734_003_200, 2_147_483_648, "34%"],
    ] as const) {
      const terminal = fakeTerminal(columns);
      let now = 0;
      const progress = createProgress({
        label: unit === "rows" ? "importing" : "uploading",
        unit,
        total,
        estimated: unit === "rows",
        stream: terminal.stream,
        interactive: true,
        intervalMs: 1000,
        now: () => now,
      });
      now = 60_000;
      progress.update(value);
      progress.stop();

      const lines = terminal.lines();
      const counts = unit === "rows" ? "4,010,337 of ~10,000,000 rows" : "700.0 MiB of 2.0 GiB";
      expect(lines.filter((line) => line.includes(counts)).length).toBeGreaterThan(0);
      for (const line of lines) expect(line.length).toBeLessThan(columns);
      const last = lines.at(-1) ?? "";
      expect(last).toMatch(new RegExp(`^(importing|uploading) \\[[█░]{10,30}\\] ${percent} \\| `));
      if (columns === 80) expect(last).toContain("ETA ");
    }
  });

  it("an import's lines fit, and the import id is never split", async () => {
    const fake = await startFake({
      jobSteps: [
        { status: "running", rowsRead: 2, created: 2 },
        { status: "succeeded", rowsRead: 3, created: 2, rejected: 1 },
      ],
    });
    const dir = mkdtempSync(join(tmpdir(), "cli-width-"));
    const file = join(dir, "old-newsletter-export.csv");
    writeFileSync(file, "email\nada@example.com\ngrace@example.com\nnot-an-address\n");
    const stdout = fakeTerminal(columns);
    const stderr = fakeTerminal(columns);

    const code = await main(["import", file, "--interval", "0.02"], cliEnv(fake), {
      stdout: stdout.stream,
      stderr: stderr.stream,
    });

    expect(code).toBe(1);
    const lines = [...stderr.lines(), ...stdout.lines()];
    for (const line of lines) expect(line.length).toBeLessThan(columns);
    const ids = lines.join("\n").match(/imp_\w*/g) ?? [];
    expect(ids.length).toBeGreaterThan(1);
    expect(new Set(ids)).toEqual(new Set([ids[0]]));
    expect(ids[0]).toHaveLength(24);
    expect(stderr.lines().some((line) => line.startsWith("Uploaded "))).toBe(true);
  });
});
