-- member_emails loses its foreign key to members. Its check runs once per inserted row, and on
-- an import it doubled the cost of recording new members' addresses. The one statement that
-- deletes members (memberRepo.delete in src/store/member-repo.ts) deletes their addresses in the
-- same statement, which is what ON DELETE CASCADE did; members' ids never change.
ALTER TABLE "member_emails" DROP CONSTRAINT "member_emails_workspace_id_member_id_fkey";
