import { type ParseArgsConfig, parseArgs } from "node:util";
import { type AudienceOption, checkAudienceOption } from "./audience-lookup.js";
import { CliError, ExitCode, explainFailure, usageError } from "./cli-errors.js";
import { checkWorkspaceId, DEFAULT_URL, readConfig, readServiceUrl } from "./config.js";
import { EXPORT_FORMATS, type ExportFormat, runExport } from "./export-command.js";
import { writeLines } from "./fit-line.js";
import { EXPORT_HELP, IMPORT_HELP, KEYS_HELP, MAIN_HELP } from "./help-text.js";
import { runImport } from "./import-command.js";
import { runKeysCreate } from "./keys-command.js";
import type { Terminal } from "./progress.js";
import { connect } from "./service.js";

const COMMON = {
  audience: { type: "string" },
  "audience-id": { type: "string" },
  workspace: { type: "string" },
  interval: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const satisfies ParseArgsConfig["options"];

const COMMANDS = {
  import: { help: IMPORT_HELP, options: { ...COMMON, activities: { type: "boolean" } } },
  export: {
    help: EXPORT_HELP,
    options: {
      ...COMMON,
      format: { type: "string" },
      output: { type: "string", short: "o" },
      "as-of": { type: "string" },
    },
  },
  keys: {
    help: KEYS_HELP,
    options: { workspace: COMMON.workspace, name: { type: "string" }, help: COMMON.help },
  },
} as const;

/** Every option of every command, for parseArgs; each command then refuses the ones it lacks. */
const ALL_OPTIONS = { ...COMMANDS.import.options, ...COMMANDS.export.options, ...COMMANDS.keys.options };

/** Runs one command line (argv without node and the script) and resolves to the exit code. */
export async function main(argv: string[], env: NodeJS.ProcessEnv, terminal: Terminal): Promise<number> {
  const [command, ...rest] = argv;
  if (command === "--help" || command === "-h" || command === "help") {
    terminal.stdout.write(MAIN_HELP);
    return ExitCode.ok;
  }
  /** Where the service is, once known: the address an unreachable-server message names. */
  let baseUrl: string | undefined;
  try {
    if (command === undefined) throw usageError(`a command is needed.\n\n${MAIN_HELP}`);
    if (command !== "import" && command !== "export" && command !== "keys") {
      throw usageError(`unknown command "${command}" (the commands are import, export and keys; see --help)`);
    }
    const { values, positionals } = parseCommandLine(command, rest);
    if (values.help) {
      terminal.stdout.write(COMMANDS[command].help);
      return ExitCode.ok;
    }
    if (command === "keys") {
      const [action, ...extra] = positionals;
      if (action !== "create" || extra.length > 0)
        throw usageError("the keys command is keys create (see keys --help)");
      if (values.workspace !== undefined) checkWorkspaceId(values.workspace);
      baseUrl = readServiceUrl(env);
      return await runKeysCreate(baseUrl, env, { workspace: values.workspace, name: values.name }, terminal);
    }
    const audience: AudienceOption = { name: values.audience, id: values["audience-id"] };
    checkAudienceOption(audience);
    const intervalMs = parseInterval(values.interval, terminal.stderr.isTTY === true);

    if (command === "import") {
      const [file, ...extra] = positionals;
      if (file === undefined || extra.length > 0) throw usageError("import takes one CSV file (see import --help)");
      const activities = "activities" in values && values.activities === true;
      if (activities && (audience.name !== undefined || audience.id !== undefined)) {
        throw usageError("a file of activities joins no audience: leave out --audience (see import --help)");
      }
      const config = readConfig(env, values.workspace);
      baseUrl = config.baseUrl;
      const kind = activities ? "activities" : "members";
      return await runImport(connect(config), { file, audience, kind, intervalMs }, terminal);
    }
    if (positionals.length > 0) throw usageError(`export takes no file name: use --output (see export --help)`);
    const format = parseFormat(values.format);
    const asOf = parseAsOf(values["as-of"], audience);
    const config = readConfig(env, values.workspace);
    baseUrl = config.baseUrl;
    return await runExport(connect(config), { audience, format, output: values.output, asOf, intervalMs }, terminal);
  } catch (error) {
    const failure = explainFailure(error, baseUrl ?? env.API_URL ?? env.AUDIENCE_SERVICE_URL ?? DEFAULT_URL);
    writeLines(terminal.stderr, `audience-service: ${failure.message}`);
    return failure.exitCode;
  }
}

function parseCommandLine(command: keyof typeof COMMANDS, args: string[]) {
  try {
    const { values, positionals } = parseArgs({
      args,
      options: ALL_OPTIONS,
      allowPositionals: true,
      strict: true,
    });
    const known = COMMANDS[command].options as Record<string, unknown>;
    const unknown = Object.keys(values).find((name) => !(name in known));
    if (unknown) throw usageError(`${command} has no option --${unknown} (see ${command} --help)`);
    return { values, positionals };
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw usageError(`${(error as Error).message} (see ${command} --help)`);
  }
}

function parseInterval(text: string | undefined, interactive: boolean): number {
  if (text === undefined) return interactive ? 1000 : 2000;
  const seconds = Number(text);
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw usageError(`--interval must be a number of seconds, not "${text}"`);
  return seconds * 1000;
}

/** A date-time with its zone, as the server reads `asOf`: a bare date or time would be a guess at one. */
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

/** --as-of: an audience's members at an earlier instant (only an audience's: the record is kept per audience). */
function parseAsOf(text: string | undefined, audience: AudienceOption): string | undefined {
  if (text === undefined) return undefined;
  if (audience.name === undefined && audience.id === undefined)
    throw usageError("--as-of needs --audience or --audience-id: the members of an audience at an instant");
  if (!INSTANT.test(text) || Number.isNaN(Date.parse(text)))
    throw usageError(`--as-of must be a date and time with a zone, such as 2026-11-03T09:00:00Z, not "${text}"`);
  return new Date(text).toISOString();
}

function parseFormat(text: string | undefined): ExportFormat {
  if (text === undefined) return "csv";
  if (!Object.hasOwn(EXPORT_FORMATS, text)) throw usageError(`--format must be csv or ndjson, not "${text}"`);
  return text as ExportFormat;
}
