// `npm run mock`: a mock of the API, answered by Prism from openapi/openapi.yaml and its examples,
// so a client can be built before (or without) a running service.
//
// Prism validates each request against the contract (a bad one gets the contract's 400/401/415
// problem document) and answers the first example of the operation's success response. Send
// `Prefer: code=409` (or `example=<name>`) to get another documented response.
//
//   MOCK_PORT (default 4010) and MOCK_HOST (default 127.0.0.1) choose where it listens.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse, stringify } from "yaml";

const port = process.env.MOCK_PORT ?? "4010";
const host = process.env.MOCK_HOST ?? "127.0.0.1";
const prism = fileURLToPath(new URL("../node_modules/@stoplight/prism-cli/dist/index.js", import.meta.url));
const source = fileURLToPath(new URL("../openapi/openapi.yaml", import.meta.url));

// Prism answers an invalid request with the operation's 422 response when one is documented, and
// 422 here means idempotency_key_reused, which a stateless mock can never produce. The mock serves
// the contract without those responses, so invalid requests get the 400 the real service sends.
const document = parse(readFileSync(source, "utf8"));
for (const item of Object.values<Record<string, { responses?: Record<string, unknown> }>>(document.paths)) {
  for (const operation of Object.values(item)) delete operation?.responses?.["422"];
}
const contract = join(mkdtempSync(join(tmpdir(), "audience-mock-")), "openapi.yaml");
writeFileSync(contract, stringify(document));

// Values from the contract's examples; any well-formed id and any bearer token work.
console.log(`Mock API on http://${host}:${port}, for example:
  export API_URL=http://${host}:${port}
  export WORKSPACE_ID=ws_7Hq2mX9vLc4RtP0aZk1e
  export API_KEY=ak_7Hq2mX9vLc4RtP0aZk1e_Qm3vT8nL2pXr6Wd1_3fJ9sK2lQ8wE5rT7yU1iO4pA6sD0fG2hJ
`);

const child = spawn(process.execPath, [prism, "mock", "--host", host, "--port", port, contract], {
  stdio: "inherit",
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
