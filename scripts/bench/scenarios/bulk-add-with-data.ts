import { foldMember } from "../../../src/features/membership/rules/filter.ts";
import { createClient } from "../http.ts";
import { type MemberWithData, rawSql, timed } from "../raw.ts";
import { pad, range } from "./member-ids.ts";
import { rateRow, thousands } from "./result-rows.ts";
import { type Context, checkTime, createAudience, type DataAudience, measure, ws } from "./scenario-context.ts";

/** Member data of the import scenario; version 1 changes company and role (a real merge). */
function importMember(prefix: "p" | "q", n: number, version: 0 | 1): MemberWithData {
  const id = `${prefix}${pad(n)}`;
  const email = `${id}@example.com`;
  const fields = {
    firstName: `First${n}`,
    lastName: `Last${n}`,
    company: version === 0 ? `Company ${n % 997}` : `Company ${n % 997} Ltd`,
    role: version === 0 ? "Engineer" : "Engineering manager",
  };
  return { id, email, fields, folded: JSON.stringify(foldMember({ id, email, fields, alternativeEmails: [] })) };
}

const asInput = ({ id, email, fields }: MemberWithData) => ({ id, email, fields });

/**
 * Scenario: members with e-mail and 4 fields, half of them existing (with older data: merged),
 * half new, into a new audience of a second workspace (the big workspace keeps its size).
 */
export async function bulkAddWithData(ctx: Context): Promise<DataAudience> {
  const { dataSize, batch } = ctx.opts;
  const existing = Math.ceil(dataSize / 2);
  const created = await ctx.admin.call<{ id: string }>("POST", "/v0/workspaces", { name: "Bench data import" }, 201);
  const workspaceId = created.body.id;
  const key = await ctx.admin.call<{ key: string }>(
    "POST",
    `/v0/workspaces/${workspaceId}/api-keys`,
    { name: "bench" },
    201,
  );
  const api = createClient(ctx.service.baseUrl, key.body.key);
  try {
    await rawSql.workspace(ctx.raw, workspaceId);
    ctx.log(`bulk add with data: seeding ${existing} members (raw upsert, POST …/members)`);
    for (let from = 0; from < existing; from += batch) {
      checkTime(ctx);
      const members = range(from, Math.min(existing, from + batch), (n) => importMember("p", n, 0));
      await rawSql.upsertMembers(ctx.raw, workspaceId, null, members);
      await api.call("POST", `${ws(ctx, workspaceId)}/members`, { members: members.map(asInput) }, 200);
    }
    const audienceId = await createAudience(ctx, "Bench: import", workspaceId, api);
    // Entry g of the import: even → existing member g/2 with new data, odd → a new member.
    const entries = (from: number) =>
      range(from, Math.min(dataSize, from + batch), (g) =>
        g % 2 === 0 ? importMember("p", g / 2, 1) : importMember("q", (g - 1) / 2, 0),
      );
    ctx.log(`bulk add with data: ${dataSize / batch} × (raw unnest upsert, POST …/members) of ${batch} members`);
    const rawMs: number[] = [];
    const serviceMs: number[] = [];
    const done = measure(ctx);
    for (let from = 0; from < dataSize; from += batch) {
      checkTime(ctx);
      const members = entries(from);
      rawMs.push(await timed(() => rawSql.upsertMembers(ctx.raw, workspaceId, audienceId, members)));
      const res = await api.call<{ added: number; created: number; merged: number }>(
        "POST",
        `${ws(ctx, workspaceId)}/audiences/${audienceId}/members`,
        { members: members.map(asInput) },
        200,
      );
      const merged = members.filter((m) => m.id.startsWith("p")).length;
      const { added, created: fresh } = res.body;
      if (added !== members.length || res.body.merged !== merged || fresh !== members.length - merged) {
        throw new Error(`bulk add with data: unexpected result ${JSON.stringify(res.body)}`);
      }
      serviceMs.push(res.ms);
    }
    ctx.rows.push({
      ...rateRow(dataSize, serviceMs, rawMs, {
        metric: "bulk_add_with_data_merge",
        label: `bulk add ${thousands(dataSize)} with e-mail + 4 fields, half merged`,
        baselineLabel: "unnest upsert",
        target: "bulk_add_with_data_merge",
      }),
      ...done(),
    });
    return { workspaceId, audienceId, apiKey: key.body.key, members: dataSize };
  } finally {
    api.close();
  }
}
