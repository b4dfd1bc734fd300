import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createRecordCounter } from "../../packages/client/src/cli/line-count.ts";

const count = (format: "csv" | "ndjson", chunks: string[]) => {
  const counter = createRecordCounter(format);
  for (const chunk of chunks) counter.add(Buffer.from(chunk));
  return counter.records;
};

describe("createRecordCounter", () => {
  it("does not end a CSV record at a line break inside quotes, nor lose track across chunks", () => {
    const csv = 'email,note\na@x.org,"two\nlines"\nb@x.org,"say ""hi""\n, twice"\nc@x.org,plain';
    expect(count("csv", [csv])).toBe(4);
    expect(count("csv", csv.split(""))).toBe(4);
    expect(count("ndjson", ['{"a":1}\n{"a"', ":2}\n"])).toBe(2);
  });

  it("counts the same records however the bytes are split", () => {
    const field = fc.stringMatching(/^[a-z,"\n]{0,6}$/).map((text) => `"${text.replaceAll('"', '""')}"`);
    const row = fc.array(fc.oneof(field, fc.stringMatching(/^[a-z]{0,4}$/)), { minLength: 1, maxLength: 4 });
    const file = fc.array(row, { minLength: 1, maxLength: 20 }).map((rows) => rows.map((r) => r.join(",")));
    fc.assert(
      fc.property(file, fc.array(fc.nat(), { maxLength: 8 }), (rows, cuts) => {
        const text = `${rows.join("\n")}\n`;
        const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
        const chunks = [0, ...points].map((from, i) => text.slice(from, points[i] ?? text.length));
        expect(count("csv", chunks)).toBe(rows.length);
      }),
    );
  });
});
