import { type ChangeReason, type MemberSet, sizeOf } from "./member-set.ts";
import type { OutboxEntry } from "./outbox-entries.ts";

type MembersChanged = Extract<OutboxEntry, { type: "audience.members_changed" }>;

/**
 * One write's events as its commit leaves things: per audience, only the members whose membership
 * differs from before the write, each under the reason of its last move. A write can move a member
 * twice, as when adding to Beta lets "Beta but not Pro" follow before the member's new data takes
 * it out again; the feed and the size history must not tell of a membership no commit held.
 *
 * Each audience's net change stands where its first change of that reason stood, so the order of
 * a write's events is kept; a change that comes to nothing is dropped.
 */
export function netChanges(recorded: readonly OutboxEntry[]): OutboxEntry[] {
  if (recorded.filter((e) => e.type === "audience.members_changed").length < 2) return [...recorded];
  const nets = new Map<string, Map<ChangeReason, Net>>();
  const out: (OutboxEntry | Net)[] = [];
  for (const entry of recorded) {
    if (entry.type !== "audience.members_changed") {
      out.push(entry);
      continue;
    }
    let byReason = nets.get(entry.audienceId);
    if (!byReason) {
      byReason = new Map();
      nets.set(entry.audienceId, byReason);
    }
    let net = byReason.get(entry.reason);
    if (!net) {
      net = { audienceId: entry.audienceId, reason: entry.reason, entered: new Map(), left: new Map() };
      byReason.set(entry.reason, net);
      out.push(net);
    }
    const all = [...byReason.values()];
    move(all, net, entry, "entered", "left");
    move(all, net, entry, "left", "entered");
  }
  return out.flatMap((item) => ("type" in item ? [item] : nonEmpty(item)));
}

interface Net {
  audienceId: string;
  reason: ChangeReason;
  entered: Map<number, Uint8Array>;
  left: Map<number, Uint8Array>;
}

/**
 * The members of `entry[way]` move that way: those who had moved back the other way earlier in the
 * write (under any reason) are where they started, the rest have moved `way` under this reason.
 */
function move(all: Net[], net: Net, entry: MembersChanged, way: "entered" | "left", back: "entered" | "left") {
  for (const [chunk, bits] of entry[way]) {
    const moving = Uint8Array.from(bits);
    for (const other of all) {
      const earlier = other[back].get(chunk);
      if (earlier === undefined) continue;
      for (let i = 0; i < moving.length; i++) {
        const undone = (moving[i] as number) & (earlier[i] as number);
        earlier[i] = (earlier[i] as number) & ~undone;
        moving[i] = (moving[i] as number) & ~undone;
      }
    }
    const mine = net[way].get(chunk);
    if (mine === undefined) net[way].set(chunk, moving);
    else for (let i = 0; i < moving.length; i++) mine[i] = (mine[i] as number) | (moving[i] as number);
  }
}

function nonEmpty(net: Net): OutboxEntry[] {
  const entered = withoutEmptyChunks(net.entered);
  const left = withoutEmptyChunks(net.left);
  if (entered.size === 0 && left.size === 0) return [];
  return [{ type: "audience.members_changed", audienceId: net.audienceId, reason: net.reason, entered, left }];
}

const withoutEmptyChunks = (set: Map<number, Uint8Array>): MemberSet =>
  new Map([...set].filter(([, bits]) => bits.some((byte) => byte !== 0)));

/** How many members entered and left one audience in one write. */
export interface SizeChange {
  audienceId: string;
  entered: number;
  left: number;
}

/** What a write's membership changes did to each audience's size, summed per audience. */
export function sizeChangesOf(recorded: OutboxEntry[]): SizeChange[] {
  const sizes = new Map<string, SizeChange>();
  for (const entry of recorded) {
    if (entry.type !== "audience.members_changed") continue;
    const size = sizes.get(entry.audienceId) ?? { audienceId: entry.audienceId, entered: 0, left: 0 };
    size.entered += sizeOf(entry.entered);
    size.left += sizeOf(entry.left);
    sizes.set(entry.audienceId, size);
  }
  return [...sizes.values()];
}
