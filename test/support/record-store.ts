import { workspaceRepo } from "../../src/features/admin/workspace-repo.ts";
import { audienceRepo } from "../../src/features/membership/audience-repo.ts";
import type { Store } from "../../src/platform/db/database.ts";
import { openTestStore } from "./live-server.ts";

/**
 * A store of the tests that write the membership record at chosen instants: a workspace whose
 * record is complete since `since`, with one audience; the test writes the members and the rows.
 */
export async function openRecordStore(
  workspaceId: string,
  audienceId: string,
  since: Date,
): Promise<{ store: Store; close(): Promise<void> }> {
  const opened = await openTestStore();
  const { db } = opened.store;
  await workspaceRepo.create(db, { id: workspaceId, name: workspaceId });
  await db.$executeRaw`UPDATE workspaces SET membership_record_since = ${since} WHERE workspace_id = ${workspaceId}`;
  await audienceRepo.create(db, { workspaceId, id: audienceId, name: audienceId });
  return opened;
}
