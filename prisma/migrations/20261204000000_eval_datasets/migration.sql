-- Rated answers as a regression suite. A dataset is a named set of cases (a turn of a conversation,
-- or a line of a feedback export: the history up to the user's message, the page context, the
-- original answer with its tool calls, results and approvals, the rating and reasons, and the
-- expectations an admin wrote). An experiment runs every case of a dataset against a candidate
-- (model, instructions, tool policy) and stores one result per case. Nothing here is read by a run.
-- A case copies its conversation's turn, and goes when the conversation does.
CREATE TYPE "AgentEvalStatus" AS ENUM ('RUNNING', 'COMPLETED', 'STOPPED', 'FAILED');

CREATE TABLE "AgentEvalDataset" (
    "id" TEXT NOT NULL,
    "projectId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "createdById" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "AgentEvalDataset_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "AgentEvalCase" (
    "id" TEXT NOT NULL,
    "datasetId" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "conversationId" TEXT,
    "messageId" TEXT,
    "userId" TEXT NOT NULL,
    "rating" INTEGER,
    "reasons" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "model" TEXT,
    "toolsUsed" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "data" JSONB NOT NULL,
    "expectations" JSONB NOT NULL DEFAULT '[]',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "AgentEvalCase_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "AgentEvalExperiment" (
    "id" TEXT NOT NULL,
    "datasetId" TEXT NOT NULL,
    "projectId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "candidate" JSONB NOT NULL,
    "systemPromptVersion" TEXT NOT NULL,
    "status" "AgentEvalStatus" NOT NULL DEFAULT 'RUNNING',
    "total" INTEGER NOT NULL,
    "done" INTEGER NOT NULL DEFAULT 0,
    "passed" INTEGER NOT NULL DEFAULT 0,
    "errored" INTEGER NOT NULL DEFAULT 0,
    "inputTokens" INTEGER NOT NULL DEFAULT 0,
    "outputTokens" INTEGER NOT NULL DEFAULT 0,
    "costUsd" DOUBLE PRECISION,
    "owner" TEXT,
    "stopRequested" BOOLEAN NOT NULL DEFAULT false,
    "errorCode" TEXT,
    "createdById" TEXT,
    "startedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "heartbeatAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finishedAt" TIMESTAMP(3),
    CONSTRAINT "AgentEvalExperiment_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "AgentEvalResult" (
    "id" TEXT NOT NULL,
    "experimentId" TEXT NOT NULL,
    "caseId" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "passed" BOOLEAN NOT NULL,
    "result" JSONB NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "AgentEvalResult_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "AgentEvalDataset_projectId_name_key" ON "AgentEvalDataset"("projectId", "name");
CREATE UNIQUE INDEX "AgentEvalCase_datasetId_messageId_key" ON "AgentEvalCase"("datasetId", "messageId");
CREATE INDEX "AgentEvalCase_datasetId_createdAt_idx" ON "AgentEvalCase"("datasetId", "createdAt");
CREATE INDEX "AgentEvalCase_conversationId_idx" ON "AgentEvalCase"("conversationId");
CREATE INDEX "AgentEvalExperiment_datasetId_startedAt_idx" ON "AgentEvalExperiment"("datasetId", "startedAt");
CREATE UNIQUE INDEX "AgentEvalResult_experimentId_caseId_key" ON "AgentEvalResult"("experimentId", "caseId");
CREATE INDEX "AgentEvalResult_caseId_idx" ON "AgentEvalResult"("caseId");
-- At most one experiment of a dataset runs at a time (on every instance).
CREATE UNIQUE INDEX "AgentEvalExperiment_one_running_per_dataset" ON "AgentEvalExperiment"("datasetId") WHERE "status" = 'RUNNING';

ALTER TABLE "AgentEvalDataset" ADD CONSTRAINT "AgentEvalDataset_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "AgentEvalCase" ADD CONSTRAINT "AgentEvalCase_datasetId_fkey" FOREIGN KEY ("datasetId") REFERENCES "AgentEvalDataset"("id") ON DELETE CASCADE ON UPDATE CASCADE;
-- A case made from a conversation goes with it (retention, a member's data deleted).
ALTER TABLE "AgentEvalCase" ADD CONSTRAINT "AgentEvalCase_conversationId_fkey" FOREIGN KEY ("conversationId") REFERENCES "AgentConversation"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "AgentEvalExperiment" ADD CONSTRAINT "AgentEvalExperiment_datasetId_fkey" FOREIGN KEY ("datasetId") REFERENCES "AgentEvalDataset"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "AgentEvalResult" ADD CONSTRAINT "AgentEvalResult_experimentId_fkey" FOREIGN KEY ("experimentId") REFERENCES "AgentEvalExperiment"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "AgentEvalResult" ADD CONSTRAINT "AgentEvalResult_caseId_fkey" FOREIGN KEY ("caseId") REFERENCES "AgentEvalCase"("id") ON DELETE CASCADE ON UPDATE CASCADE;
