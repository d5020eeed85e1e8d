-- Provenance of an issue's text, per field: MEMBER (a signed-in member, directly or through the
-- in-app assistant) or EXTERNAL (written through a project API key). EXTERNAL text is untrusted.
CREATE TYPE "ContentSource" AS ENUM ('MEMBER', 'EXTERNAL');

ALTER TABLE "Issue"
    ADD COLUMN "titleSource" "ContentSource" NOT NULL DEFAULT 'MEMBER',
    ADD COLUMN "bodySource" "ContentSource" NOT NULL DEFAULT 'MEMBER',
    ADD COLUMN "labelsSource" "ContentSource" NOT NULL DEFAULT 'MEMBER';

-- Until now an issue without a reporter (created through a project key, or whose reporter's account
-- is gone) was the untrusted kind: its text keeps that status.
UPDATE "Issue" SET "titleSource" = 'EXTERNAL', "bodySource" = 'EXTERNAL', "labelsSource" = 'EXTERNAL'
WHERE "reporterId" IS NULL;
