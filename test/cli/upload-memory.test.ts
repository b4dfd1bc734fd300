import { once } from "node:events";
import { createWriteStream, mkdtempSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { connect } from "../../packages/client/src/cli/service.ts";
import { uploadCsv } from "../../packages/client/src/cli/upload.ts";
import { formatApiKey } from "../../src/domain/api-key.ts";

const FILE_MIB = 64;
const workspaceId = `ws_${"w".repeat(20)}`;
const apiKey = formatApiKey({ workspaceId, keyId: `key_${"k".repeat(20)}`, secret: "s".repeat(32) });
let server: ReturnType<typeof createServer>;
let received = 0;

// A server that reads the upload and keeps nothing, so this process's memory is the CLI's alone.
beforeAll(async () => {
  server = createServer(async (req, res) => {
    for await (const chunk of req) received += (chunk as Buffer).length;
    res.writeHead(202, { "content-type": "application/json" }).end(JSON.stringify({ id: "imp_1", status: "queued" }));
  }).listen(0, "127.0.0.1");
  await once(server, "listening");
});
afterAll(() => server.close());

async function writeFile(path: string, mib: number) {
  const out = createWriteStream(path);
  const block = Buffer.from(`email,firstName\n${"someone@example.com,Someone\n".repeat(38_000)}`).subarray(0, 1 << 20);
  for (let i = 0; i < mib; i++) if (!out.write(block)) await once(out, "drain");
  out.end();
  await once(out, "finish");
}

it(`uploads a ${FILE_MIB} MiB file holding a few MiB of it in memory at a time`, async () => {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  const path = join(mkdtempSync(join(tmpdir(), "cli-upload-")), "big.csv");
  await writeFile(path, FILE_MIB);
  const { port } = server.address() as AddressInfo;
  const service = connect({ baseUrl: `http://127.0.0.1:${port}`, apiKey, workspaceId });

  let peak = 0;
  gc();
  const base = process.memoryUsage().arrayBuffers;
  const sampler = setInterval(() => {
    gc();
    peak = Math.max(peak, process.memoryUsage().arrayBuffers - base);
  }, 20);
  const upload = await uploadCsv(service, path, {
    audienceId: undefined,
    kind: "members",
    signal: new AbortController().signal,
    onProgress: () => {},
  });
  clearInterval(sampler);

  expect(upload.job.id).toBe("imp_1");
  expect(received).toBe(FILE_MIB << 20);
  expect(peak).toBeLessThan(24 << 20);
});
