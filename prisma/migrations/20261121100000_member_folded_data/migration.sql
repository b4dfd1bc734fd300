-- AlterTable
ALTER TABLE "members" ADD COLUMN "folded" JSONB NOT NULL DEFAULT '{}';

-- Members written before this column existed: fold with lower() (the service folds new writes itself).
UPDATE "members" SET "folded" = jsonb_build_object(
    'id', lower("id"),
    'email', lower("email"),
    'emails', coalesce((SELECT jsonb_agg(lower(e)) FROM unnest(array_prepend("email", "alternative_emails")) AS e WHERE e IS NOT NULL), '[]'::jsonb),
    'fields', coalesce((SELECT jsonb_object_agg(key, lower(value)) FROM jsonb_each_text("fields") WHERE value <> ''), '{}'::jsonb)
);
