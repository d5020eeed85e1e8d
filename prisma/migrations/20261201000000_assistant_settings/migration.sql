-- Project settings of the assistant: tool permissions and instructions, each a line of versions
-- (the newest applies to the next run, on every instance); "always allow in this conversation"
-- grants keyed by the tool-permission version they were given under; and the versions each run
-- went by.
CREATE TABLE "AgentToolPolicyVersion" (
    "id" TEXT NOT NULL,
    "projectId" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "policy" JSONB NOT NULL,
    "changes" JSONB NOT NULL,
    "createdById" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "AgentToolPolicyVersion_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "AgentToolPolicyVersion_projectId_version_key" ON "AgentToolPolicyVersion"("projectId", "version");
ALTER TABLE "AgentToolPolicyVersion" ADD CONSTRAINT "AgentToolPolicyVersion_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "AgentToolPolicyVersion" ADD CONSTRAINT "AgentToolPolicyVersion_createdById_fkey" FOREIGN KEY ("createdById") REFERENCES "User"("id") ON DELETE SET NULL ON UPDATE CASCADE;

CREATE TABLE "AgentInstructionsVersion" (
    "id" TEXT NOT NULL,
    "projectId" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "text" TEXT NOT NULL,
    "createdById" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "AgentInstructionsVersion_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "AgentInstructionsVersion_projectId_version_key" ON "AgentInstructionsVersion"("projectId", "version");
ALTER TABLE "AgentInstructionsVersion" ADD CONSTRAINT "AgentInstructionsVersion_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "AgentInstructionsVersion" ADD CONSTRAINT "AgentInstructionsVersion_createdById_fkey" FOREIGN KEY ("createdById") REFERENCES "User"("id") ON DELETE SET NULL ON UPDATE CASCADE;

CREATE TABLE "AgentConversationAllow" (
    "id" TEXT NOT NULL,
    "conversationId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "toolName" TEXT NOT NULL,
    "policyVersion" INTEGER NOT NULL,
    "approvalId" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revokedAt" TIMESTAMP(3),
    "revokedById" TEXT,
    CONSTRAINT "AgentConversationAllow_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "AgentConversationAllow_conversationId_policyVersion_idx" ON "AgentConversationAllow"("conversationId", "policyVersion");
ALTER TABLE "AgentConversationAllow" ADD CONSTRAINT "AgentConversationAllow_conversationId_fkey" FOREIGN KEY ("conversationId") REFERENCES "AgentConversation"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "AgentConversationAllow" ADD CONSTRAINT "AgentConversationAllow_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "AgentConversationAllow" ADD CONSTRAINT "AgentConversationAllow_revokedById_fkey" FOREIGN KEY ("revokedById") REFERENCES "User"("id") ON DELETE SET NULL ON UPDATE CASCADE;

ALTER TABLE "AgentRun" ADD COLUMN "policyVersion" INTEGER;
ALTER TABLE "AgentRun" ADD COLUMN "instructionsVersion" INTEGER;
