import { ApiError, type Problem } from "../index.js";

/** The exit codes scripts can rely on; `--help` lists them (help-text.ts). */
export const ExitCode = {
  ok: 0,
  /** The import finished, but some rows were rejected (the rest were applied). */
  rowsRejected: 1,
  /** Bad arguments or configuration: options, API_KEY, API_URL, a key the server refuses. */
  usage: 2,
  /** The import job failed, or was cancelled by someone else. */
  jobNotSucceeded: 3,
  /** The server answered with an error, or could not be reached. */
  serverError: 4,
  /** Ctrl-C (128 + SIGINT); an import job is cancelled first. */
  interrupted: 130,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** A failure the CLI explains in one message and ends with this exit code. */
export class CliError extends Error {
  override readonly name = "CliError";
  constructor(
    readonly exitCode: ExitCode,
    message: string,
  ) {
    super(message);
  }
}

export const usageError = (message: string) => new CliError(ExitCode.usage, message);

/** Connection errors that mean no server answers at the address (rather than one lost midway). */
const UNREACHABLE = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/** The fetch() rejection for an aborted request (Ctrl-C). */
export const isAbort = (error: unknown) => error instanceof Error && error.name === "AbortError";

/**
 * What to tell the user about a failure, and the exit code it ends with. A problem document reads
 * `code: detail` (with each bad part of the request for invalid_request); a refused key is a
 * configuration error; anything that did not reach the server names the address it tried.
 */
export function explainFailure(error: unknown, baseUrl: string): CliError {
  if (error instanceof CliError) return error;
  if (error instanceof ApiError) return explainApiError(error);
  const cause = (error as { cause?: { code?: string; message?: string } } | undefined)?.cause;
  if (error instanceof TypeError && cause) {
    const code = cause.code ?? "";
    return new CliError(
      ExitCode.serverError,
      UNREACHABLE.has(code)
        ? `cannot reach the audience service at ${baseUrl} (${code}); is it running, and is API_URL right?`
        : `the connection to the audience service at ${baseUrl} failed: ${cause.message ?? code}${code ? ` (${code})` : ""}`,
    );
  }
  return new CliError(ExitCode.serverError, error instanceof Error ? error.message : String(error));
}

function explainApiError(error: ApiError): CliError {
  const problem = error.problem;
  const text = problem ? describeProblem(problem) : `the server answered ${error.status} ${error.response.statusText}`;
  if (error.status === 401 || error.status === 403) {
    return new CliError(ExitCode.usage, `${text}\nCheck API_KEY: it must be a key of the workspace you address.`);
  }
  return new CliError(ExitCode.serverError, text);
}

export function describeProblem(problem: Problem): string {
  const lines = [`${problem.code}: ${problem.detail ?? problem.title}`];
  for (const item of problem.errors ?? []) lines.push(`  ${item.pointer}: ${item.message}`);
  return lines.join("\n");
}
