-- CreateTable: the declared types of a workspace's custom fields (a field not listed is a string).
-- Every stored value of a declared field parses as its type: the declaration checks them, under
-- the workspace's member lock, and every member write checks what it writes.
CREATE TABLE "field_types" (
    "workspace_id" TEXT COLLATE "C" NOT NULL,
    "key" TEXT COLLATE "C" NOT NULL,
    "type" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "field_types_pkey" PRIMARY KEY ("workspace_id","key"),
    CONSTRAINT "field_types_type_check" CHECK ("type" IN ('number', 'date', 'boolean'))
);

-- AddForeignKey
ALTER TABLE "field_types" ADD CONSTRAINT "field_types_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("workspace_id") ON DELETE CASCADE ON UPDATE CASCADE;
