const EXIT_CODES = `Exit codes:
  0    done (import: every row applied)
  1    import: the job finished, but some rows were rejected (the others were applied)
  2    usage or configuration: bad options, API_KEY, ADMIN_TOKEN or API_URL missing or wrong,
       the key or token refused by the server, a file that cannot be read, an audience name or
       a workspace not found
  3    import: the job failed, or was cancelled elsewhere (the summary says what was applied)
  4    the server answered with an error, or could not be reached
  130  interrupted (Ctrl-C); an import job is cancelled first`;

const URL_VARIABLE = `  API_URL               where the service is (default http://127.0.0.1:3000); the older name
                        AUDIENCE_SERVICE_URL is read when API_URL is not set`;

const ENVIRONMENT = `Environment:
${URL_VARIABLE}
  API_KEY               a workspace API key, ak_<workspace>_<key>_<secret>; the server prints
                        one on its first start, keys create makes more. Its workspace is the
                        one addressed.`;

const COMMON_OPTIONS = `  --workspace ID       address this workspace (ws_…) instead of the API key's own
  --interval SECONDS   how often to report progress (default 1 on a terminal, 2 otherwise)
  -h, --help           show this help`;

export const MAIN_HELP = `audience-service: import and export the members of an Audience Service workspace, and
make API keys for it.

Usage:
  audience-service import <file.csv> [--audience NAME | --audience-id ID | --activities]
  audience-service export [--audience NAME | --audience-id ID] [--as-of TIME] [--format csv|ndjson]
                          [--output FILE]
  audience-service keys create --workspace ID [--name NAME]
  audience-service <command> --help

Commands:
  import   upload a CSV file of members (or of activities) and follow the import job to its end
  export   write every member (of an audience, or of the workspace) as CSV or NDJSON
  keys     make a new API key for a workspace, with the server's admin token (a lost key)

${ENVIRONMENT}

${EXIT_CODES}
`;

export const IMPORT_HELP = `Usage: audience-service import <file.csv> [--audience NAME | --audience-id ID | --activities] [options]

Uploads the file (streamed, whatever its size) as an import job, then follows the job: a progress
bar with rows/s and ETA on a terminal, plain progress lines on stderr otherwise. Ends with a
summary on stdout (created, merged, unchanged and rejected rows, and the rejected lines with
their reasons, the first 100). Ctrl-C cancels the job: the chunks already applied stay applied.

The first row names the columns: id and/or email, then alternativeEmails (;-separated),
firstName, lastName, role, company, or any custom field key.

With --activities, each row is an activity: memberId or email, type, occurredAt (optional), id
(optional: a row whose id is stored already counts as a duplicate) and properties.<key> columns
(a JSON number or true/false is kept as one, anything else as a string). The summary then counts
accepted, duplicate and expired rows, and the members the file created.

Options:
  --audience NAME      every member of the file joins the unarchived audience with this name
                       (compared case-insensitively); it is created if there is none
  --audience-id ID     every member of the file joins this audience (aud_…)
  --activities         the file holds activities, not members (it joins no audience)
${COMMON_OPTIONS}

${ENVIRONMENT}

${EXIT_CODES}
`;

export const EXPORT_HELP = `Usage: audience-service export [--audience NAME | --audience-id ID] [options] [> file]

Writes every member of the audience (or, without an audience, of the workspace) to stdout or
--output, streamed as the server sends it: CSV with the columns import reads, or NDJSON, one
member per line. Progress goes to stderr, and only when the data does not go to the terminal.
With --output the file appears only once it is complete.

With --as-of, the members the audience had at that earlier instant (a date and time with its
zone: 2026-11-03T09:00:00Z, or 2026-11-03T10:00:00+01:00), as the server's membership record
keeps them (MEMBERSHIP_HISTORY_DAYS, 400 days by default; an older instant is refused, naming
the oldest it keeps). Members show their data as it is now; one deleted since is its id alone
(CSV) or a line with deletedAt (NDJSON).

Options:
  --audience NAME      the unarchived audience with this name (case-insensitive)
  --audience-id ID     the audience with this id (aud_…), archived or not
  --format FORMAT      csv (default) or ndjson
  -o, --output FILE    write to FILE instead of stdout
  --as-of TIME         the audience's members at this instant (ISO 8601 with a zone)
${COMMON_OPTIONS}

${ENVIRONMENT}

${EXIT_CODES}
`;

export const KEYS_HELP = `Usage: audience-service keys create --workspace ID [--name NAME]

Makes a new API key for the workspace with the server's admin token (the admin operation
createApiKey): the way back when a workspace's key is lost. The key goes to stdout, alone, and is
shown only this once (the server keeps a hash of it); its id and name go to stderr. Older keys
keep working. To use it at once:
  export API_KEY=$(npx audience-service keys create --workspace ws_…)

Options:
  --workspace ID       the workspace (ws_…) the key is for
  --name NAME          a label to recognise the key by (default "default")
  -h, --help           show this help

Environment:
${URL_VARIABLE}
  ADMIN_TOKEN           the admin token the server was started with (its ADMIN_TOKEN)

${EXIT_CODES}
`;
