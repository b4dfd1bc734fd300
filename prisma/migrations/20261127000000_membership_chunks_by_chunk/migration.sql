-- The audiences' chunks of one member-number range, across the workspace's audiences. Which
-- audiences a member belongs to (memberRepo.memberAudiences) reads the chunks at that member's
-- chunk number: without this index, the primary key (workspace, audience, kind, chunk) gave it
-- every chunk of the workspace to filter, so its cost grew with the workspace's audiences. It
-- costs writes an index entry per new row version, as the primary key does.
CREATE INDEX "membership_chunks_workspace_id_kind_chunk_idx" ON "membership_chunks"("workspace_id", "kind", "chunk");
