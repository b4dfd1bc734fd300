import { readdirSync, readFileSync } from "node:fs";
import { REPO_ROOT } from "./sdk-support.ts";

/**
 * The shell blocks of the README and the guides, as doc-blocks.test.ts runs them.
 *
 * A block fenced ```bash, ```sh or ```shell is run. One fenced ```bash no-run is shown to the
 * reader and not run (starting the server, installing, deploying, backups, the test suite, the
 * benchmark): the test lists each of those by file and first line, so a new block is never
 * skipped without someone saying so there.
 */
export interface ShellBlock {
  file: string;
  /** The line of its opening fence, 1-based. */
  line: number;
  /** Its first line of text, trimmed. */
  firstLine: string;
  text: string;
  run: boolean;
}

/** The documents in the order their blocks run, one shell for all: each uses what earlier ones set. */
export const DOCUMENTS = [
  "README.md",
  // api.md declares `score` and removes the declaration again, before rules.md's rules come to use it.
  "docs/api.md",
  "docs/rules.md",
  "docs/events.md",
  "docs/webhooks.md",
  "docs/imports-exports.md",
  "docs/sdk.md",
  "docs/operations.md",
  "docs/performance.md",
];

const SHELLS = new Set(["bash", "sh", "shell"]);

/** The shell blocks of one file (indented ones, in list items, included), in order. */
export function shellBlocks(file: string): ShellBlock[] {
  const lines = readFileSync(REPO_ROOT + file, "utf8").split("\n");
  const blocks: ShellBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\S*)\s*(.*)$/.exec(lines[i] ?? "");
    if (!open) continue;
    const [, indent = "", language = "", info = ""] = open;
    const end = lines.findIndex((text, j) => j > i && /^\s*```\s*$/.test(text));
    if (end < 0) throw new Error(`${file}:${i + 1}: a fence that is never closed`);
    if (SHELLS.has(language)) {
      const body = lines.slice(i + 1, end).map((text) => (text.startsWith(indent) ? text.slice(indent.length) : text));
      blocks.push({
        file,
        line: i + 1,
        firstLine: (body[0] ?? "").trim(),
        text: `${body.join("\n")}\n`,
        run: !info.split(/\s+/).includes("no-run"),
      });
    }
    i = end;
  }
  return blocks;
}

/** The README and the guides of docs/ that hold a shell block. */
export function documentsWithShellBlocks(): string[] {
  const docs = readdirSync(`${REPO_ROOT}docs`)
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`);
  return ["README.md", ...docs].filter((file) => shellBlocks(file).length > 0);
}

/**
 * One bash script of the runnable blocks, in DOCUMENTS order. It stops at the first command that
 * fails, naming its block (blockName); `curl` is wrapped to log each answer's status beside the block that
 * sent it (to $CURL_LOG), its output unchanged; and it ends by printing the ids the blocks
 * captured.
 */
export function script(blocks: ShellBlock[], rewrite: (text: string) => string, captured: string[]): string {
  const prelude = String.raw`set -Eeuo pipefail
trap 'echo "doc-blocks: a command failed in $DOC_BLOCK" >&2' ERR
curl() {
  local headers status
  headers=$(mktemp)
  command curl -D "$headers" "$@"
  status=$(grep -a '^HTTP/' "$headers" | tail -n 1 | cut -d' ' -f2)
  rm -f "$headers"
  local args="$*"
  printf '%s\t%s\t%s\n' "$status" "$DOC_BLOCK" "${"${"}args//$'\n'/ }" >> "$CURL_LOG"
}
`;
  const body = blocks
    .filter((block) => block.run)
    .map((block) => `DOC_BLOCK='${blockName(block).replaceAll("'", "'\\''")}'\n${rewrite(block.text)}`)
    .join("\n");
  const epilogue = `DOC_BLOCK='the captured ids'\nfor name in ${captured.join(" ")}; do printf 'captured %s=%s\\n' "$name" "\${!name}"; done\n`;
  return prelude + body + epilogue;
}

/** A block's name in the test: its file and first line (line numbers move as the documents grow). */
export function blockName(block: ShellBlock): string {
  return `${block.file}: ${block.firstLine}`;
}

/** A line of the curl log: the answer's status, the block that sent it, and curl's arguments. */
export interface CurlCall {
  status: number;
  block: string;
  args: string;
}

export function parseCurlLog(log: string): CurlCall[] {
  return log
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [status = "", block = "", ...args] = line.split("\t");
      return { status: Number(status), block, args: args.join("\t") };
    });
}
