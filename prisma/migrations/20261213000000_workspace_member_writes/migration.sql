-- How many member writes a workspace has had. The member lock (lock-repo.ts memberWrites) was a
-- row lock on the workspace's row; it is now this counter's increment, so that the write's first
-- read can go in the lock's statement: that statement's snapshot is older than the lock it may
-- wait for, and a read beside the lock stands only when the counter the snapshot saw is one below
-- the one the increment returned (no member write committed in between); otherwise the write
-- reads again under the lock. An UPDATE of a column no index holds takes the same row lock as
-- FOR NO KEY UPDATE did, so inserts that reference the workspace are not held up.
ALTER TABLE "workspaces" ADD COLUMN "member_writes" BIGINT NOT NULL DEFAULT 0;
