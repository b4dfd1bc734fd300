-- members loses its foreign key to workspaces. Its check runs once per inserted row: on an
-- import's chunk of 10,000 new members it cost 28-40 ms of a statement that is most of the
-- chunk's time. The statement that creates members (memberRepo.insert in
-- src/store/member-repo.ts) takes their numbers from the workspace's row in the same statement
-- and inserts nothing when that row does not exist, and workspaces are never deleted.
ALTER TABLE "members" DROP CONSTRAINT "members_workspace_id_fkey";
