-- Versions of a conversation's turns (edit and regenerate), a bounded history window, a size
-- limit, and tool call ids unique per run.
--
-- Runs form a tree: each run follows the run that was last on the conversation's shown path when
-- it started (`precedingRunId`); the versions of a turn are runs following the same run, and the
-- one shown is the one selected last (`selectedAt`). `headRunId` is the last run of the shown path.

ALTER TABLE "AgentRun" ADD COLUMN "precedingRunId" TEXT;
ALTER TABLE "AgentRun" ADD COLUMN "selectedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;
CREATE INDEX "AgentRun_conversationId_precedingRunId_idx" ON "AgentRun"("conversationId", "precedingRunId");

ALTER TABLE "AgentConversation" ADD COLUMN "headRunId" TEXT;
ALTER TABLE "AgentConversation" ADD COLUMN "runCount" INTEGER NOT NULL DEFAULT 0;
-- What the conversation has read, for the data-flow guard (the model's history is only a window).
ALTER TABLE "AgentConversation" ADD COLUMN "readPrivateData" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "AgentConversation" ADD COLUMN "readUntrustedContent" BOOLEAN NOT NULL DEFAULT false;

-- A message's id, for finding one message without reading its conversation.
ALTER TABLE "AgentEvent" ADD COLUMN "messageId" TEXT;
CREATE INDEX "AgentEvent_conversationId_messageId_idx" ON "AgentEvent"("conversationId", "messageId");

-- Providers reuse tool call ids across conversations: unique per run.
DROP INDEX "AgentPendingApproval_toolCallId_key";
CREATE UNIQUE INDEX "AgentPendingApproval_runId_toolCallId_key" ON "AgentPendingApproval"("runId", "toolCallId");
CREATE INDEX "AgentPendingApproval_toolCallId_idx" ON "AgentPendingApproval"("toolCallId");

-- Existing conversations: one straight path in the order the runs started.
UPDATE "AgentRun" r SET "precedingRunId" = p.prev, "selectedAt" = r."startedAt"
FROM (
  SELECT "id", LAG("id") OVER (PARTITION BY "conversationId" ORDER BY "startedAt", "id") AS prev FROM "AgentRun"
) p
WHERE p."id" = r."id";
UPDATE "AgentConversation" c SET
  "runCount" = (SELECT count(*) FROM "AgentRun" r WHERE r."conversationId" = c."id"),
  "headRunId" = (SELECT r."id" FROM "AgentRun" r WHERE r."conversationId" = c."id" ORDER BY r."startedAt" DESC, r."id" DESC LIMIT 1);
UPDATE "AgentEvent" SET "messageId" = "payload"->>'messageId' WHERE "type" = 'TEXT_MESSAGE';
-- Tools that read project data (all reads) and text written outside the team, as the registry
-- tagged them when this migration was written.
UPDATE "AgentConversation" c SET
  "readPrivateData" = EXISTS (
    SELECT 1 FROM "AgentEvent" e WHERE e."conversationId" = c."id" AND e."type" = 'TOOL_CALL'
      AND e."payload"->>'toolCallName' IN ('list_issues', 'get_issue', 'search_issues', 'list_members', 'list_labels', 'get_project_summary')),
  "readUntrustedContent" = EXISTS (
    SELECT 1 FROM "AgentEvent" e WHERE e."conversationId" = c."id" AND e."type" = 'TOOL_CALL'
      AND e."payload"->>'toolCallName' IN ('list_issues', 'get_issue', 'search_issues', 'get_project_summary'));
