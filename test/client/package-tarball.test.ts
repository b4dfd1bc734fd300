// The SDK package as a consumer gets it: packed (`npm pack`), installed from the tarball into a
// project of its own outside the repository, and used there with plain Node, tsc and its CLI.
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { parse } from "yaml";
import { CLIENT_DIR } from "../support/client-build.ts";
import { createAudience } from "../support/factories.ts";
import { it } from "../support/fixture.ts";
import { REPO_ROOT } from "./sdk-support.ts";

const run = promisify(execFile);
/** The environment without npm's own variables: the ones `npm test` sets would aim npm at the repository. */
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
const npm = (args: string[], cwd: string) => run("npm", args, { cwd, env, timeout: 240_000 });
const TSC = join(REPO_ROOT, "node_modules/typescript/bin/tsc");
const TYPES_NODE = JSON.parse(readFileSync(join(REPO_ROOT, "node_modules/@types/node/package.json"), "utf8")).version;

/** The server's packages, none of which a consumer of the SDK may get. */
const SERVER_PACKAGES =
  /^(fastify|@fastify\/.*|@prisma\/.*|prisma|@electric-sql\/.*|pg|pglite-prisma-adapter|tsx|esbuild)$/;

let project: string;
let packed: { filename: string; files: Array<{ path: string }> };
let manifest: { name: string; version: string; dependencies: Record<string, string> };

// The global setup has built the package; packing skips its prepare script so that nothing
// rewrites dist/ while other test files use it.
beforeAll(async () => {
  project = await mkdtemp(join(tmpdir(), "audience-sdk-consumer-"));
  const { stdout } = await npm(["pack", "--ignore-scripts", "--json", "--pack-destination", project], CLIENT_DIR);
  [packed] = JSON.parse(stdout);
  manifest = JSON.parse(readFileSync(join(CLIENT_DIR, "package.json"), "utf8"));
  await writeFile(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  // Its dependencies are in npm's cache already (the repository's install put them there).
  await npm(
    ["install", "--prefer-offline", "--no-audit", "--no-fund", `./${packed.filename}`, `@types/node@${TYPES_NODE}`],
    project,
  );
}, 300_000);

afterAll(async () => {
  if (project) await rm(project, { recursive: true, force: true });
});

/** Every package installed in the project, nested ones included, by name. */
function installed(dir = join(project, "node_modules")): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    if (name.startsWith(".")) return [];
    if (name.startsWith("@")) return installed(join(dir, name)).map((inner) => `${name}/${inner}`);
    return [name, ...installed(join(dir, name, "node_modules"))];
  });
}

describe("the SDK package, packed and installed in a project of its own", () => {
  it("ships built JavaScript, declarations, the contract's types and the CLI, and no TypeScript source", () => {
    const files = packed.files.map((file) => file.path);
    expect(files).toEqual(
      expect.arrayContaining([
        "package.json",
        "README.md",
        "dist/index.js",
        "dist/index.d.ts",
        "dist/cli/main.js",
        "generated/api.d.ts",
        "bin/audience-service.mjs",
      ]),
    );
    expect(files.filter((path) => path.endsWith(".ts") && !path.endsWith(".d.ts"))).toEqual([]);
  });

  it("is versioned as the contract, and depends on what it uses only", () => {
    const contract = parse(readFileSync(join(REPO_ROOT, "openapi/openapi.yaml"), "utf8"));
    expect(manifest.version).toBe(contract.info.version);
    expect(Object.keys(manifest.dependencies).sort()).toEqual(["cli-progress", "openapi-fetch", "standardwebhooks"]);
  });

  it("installs nothing of the server", () => {
    const names = installed();
    expect(names).toContain("@audience-service/client");
    expect(names).toContain("openapi-fetch");
    expect(names.filter((name) => SERVER_PACKAGES.test(name))).toEqual([]);
  });

  it("is imported from plain Node (ESM, and require() from CommonJS) and calls a live server", async ({
    server,
    ws,
  }) => {
    await createAudience(ws, "Readers");
    await writeFile(
      join(project, "index.mjs"),
      `import { ApiError, createAudienceClient } from "@audience-service/client";
const api = createAudienceClient({ baseUrl: process.env.API_URL, apiKey: process.env.API_KEY });
const path = { workspaceId: process.env.WORKSPACE_ID };
const { results } = await api.GET("/v0/workspaces/{workspaceId}/audiences", { params: { path } });
for (const audience of results) console.log(audience.name);
await api.POST("/v0/workspaces/{workspaceId}/audiences", { params: { path }, body: { name: "Readers" } }).catch(
  (error) => console.log(error instanceof ApiError ? error.code : error),
);
`,
    );
    await writeFile(
      join(project, "index.cjs"),
      `const { createAudienceClient, verifyWebhook } = require("@audience-service/client");
console.log(typeof createAudienceClient, typeof verifyWebhook);
`,
    );
    const runEnv = { ...env, API_URL: server.baseUrl, API_KEY: ws.key, WORKSPACE_ID: ws.id };
    const esm = await run(process.execPath, ["index.mjs"], { cwd: project, env: runEnv });
    expect(esm.stdout.trimEnd().split("\n")).toEqual(["Readers", "audience_name_taken"]);
    const cjs = await run(process.execPath, ["index.cjs"], { cwd: project, env: runEnv });
    expect(cjs.stdout.trim()).toBe("function function");
  });

  it("type-checks a consumer with tsc under node16 and bundler resolution, refusing a wrong body", async () => {
    await writeFile(
      join(project, "consumer.ts"),
      `import { ApiError, createAudienceClient, type EventOf, verifyWebhook } from "@audience-service/client";

const api = createAudienceClient({ baseUrl: "http://127.0.0.1:3000", apiKey: "ak_x" });

export async function memberIds(workspaceId: string): Promise<string[]> {
  const { id } = await api.POST("/v0/workspaces/{workspaceId}/audiences", {
    params: { path: { workspaceId } },
    body: { name: "Readers" },
  });
  await api.POST("/v0/workspaces/{workspaceId}/audiences", {
    params: { path: { workspaceId } },
    // @ts-expect-error an audience's name is a string
    body: { name: 42 },
  });
  const ids: string[] = [];
  for await (const member of api.members("/v0/workspaces/{workspaceId}/audiences/{audienceId}/members", {
    params: { path: { workspaceId, audienceId: id } },
  })) {
    ids.push(member.id);
  }
  return ids;
}

export const entered = (event: EventOf<"audience.members_changed">): string[] => event.data.entered;
export const nameTaken = (error: unknown) => error instanceof ApiError && error.code === "audience_name_taken";
export { verifyWebhook };
`,
    );
    // node16 checks the package's declarations too (skipLibCheck off); bundler as Vite's starters set it up.
    const options = { target: "es2022", strict: true, noEmit: true, types: ["node"] };
    for (const [name, resolution] of [
      ["node16", { module: "node16", moduleResolution: "node16", skipLibCheck: false }],
      ["bundler", { module: "esnext", moduleResolution: "bundler", skipLibCheck: true }],
    ] as const) {
      const config = `tsconfig.${name}.json`;
      await writeFile(
        join(project, config),
        JSON.stringify({ compilerOptions: { ...options, ...resolution }, files: ["consumer.ts"] }),
      );
      const result = await run(process.execPath, [TSC, "-p", config], { cwd: project, env }).catch(
        (error: { stdout: string }) => ({ stdout: error.stdout, failed: true }),
      );
      expect({ resolution: name, ...result }).toEqual({ resolution: name, stdout: "", stderr: "" });
    }
  }, 180_000);

  it("runs its CLI, audience-service --help", async () => {
    const { stdout } = await npm(["exec", "--no", "--", "audience-service", "--help"], project);
    expect(stdout).toMatch(
      /^audience-service: import and export the members of an Audience Service workspace, and\nmake API keys for it\./,
    );
    expect(stdout).toContain("audience-service keys create --workspace ID");
    expect(stdout).toContain("audience-service import <file.csv>");
  });
});
