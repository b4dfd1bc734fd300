import { ApiError, createAudienceClient } from "../index.js";
import { CliError, ExitCode, usageError } from "./cli-errors.js";
import { writeLines } from "./fit-line.js";
import type { Terminal } from "./progress.js";

export interface KeysCreateArgs {
  workspace: string | undefined;
  name: string | undefined;
}

/**
 * `keys create`: a new API key for a workspace (createApiKey), with the server's admin token, the
 * way back when a workspace's key is lost. The key alone goes to stdout, so that
 * `export API_KEY=$(audience-service keys create --workspace ws_…)` works; what it is goes to stderr.
 */
export async function runKeysCreate(
  baseUrl: string,
  env: NodeJS.ProcessEnv,
  args: KeysCreateArgs,
  { stdout, stderr }: Terminal,
): Promise<ExitCode> {
  const workspaceId = args.workspace;
  if (workspaceId === undefined) throw usageError("keys create needs --workspace ws_… (see keys --help)");
  const adminToken = env.ADMIN_TOKEN?.trim();
  if (!adminToken) {
    throw usageError(
      "ADMIN_TOKEN is not set. Set it to the admin token the server was started with (its ADMIN_TOKEN).",
    );
  }
  const api = createAudienceClient({ baseUrl, apiKey: adminToken });
  let created: { id: string; name: string; key: string };
  try {
    created = await api.POST("/v0/workspaces/{workspaceId}/api-keys", {
      params: { path: { workspaceId } },
      body: args.name === undefined ? {} : { name: args.name },
    });
  } catch (error) {
    throw explainRefusal(error, workspaceId);
  }
  stdout.write(`${created.key}\n`);
  writeLines(
    stderr,
    `Created the API key ${created.id} ("${created.name}") for ${workspaceId}. It is shown only this once: keep it (API_KEY=ak_… for the other commands).`,
  );
  return ExitCode.ok;
}

/** The admin refusals a user can act on, each as one line; anything else goes to the common handling. */
function explainRefusal(error: unknown, workspaceId: string): unknown {
  if (!(error instanceof ApiError)) return error;
  // The code alone: the details speak of API keys and of the workspace already named here.
  const said = ` (${error.code ?? error.status})`;
  if (error.status === 401 || error.status === 403) {
    return usageError(`the server refused ADMIN_TOKEN${said}; it must be the admin token the server was started with.`);
  }
  if (error.status === 404) {
    return new CliError(ExitCode.usage, `the server has no workspace ${workspaceId}${said}; check --workspace.`);
  }
  return error;
}
