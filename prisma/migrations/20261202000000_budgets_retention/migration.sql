-- Budgets, spend, retention and redaction of the assistant, set per project by its admins.
--
-- AgentBudget: at most one budget per project and scope (a member per UTC day, a member per UTC
-- month, the whole project per UTC month), in US dollars or in tokens.
-- AgentSpend: what the assistant spent per window, counted by the statement that records a run's
-- end (one row per member and day, member and month, and project and month; `userId` '' is the
-- whole project). The statement that opens a run reads at most three of these rows by their key.
-- AgentDataPolicy: how long the project's conversations are kept, and whether e-mail addresses and
-- phone numbers are masked in stored text (secrets always are).
CREATE TYPE "AgentBudgetScope" AS ENUM ('MEMBER_DAY', 'MEMBER_MONTH', 'PROJECT_MONTH');
CREATE TYPE "AgentBudgetUnit" AS ENUM ('USD', 'TOKENS');
CREATE TYPE "AgentSpendPeriod" AS ENUM ('DAY', 'MONTH');

CREATE TABLE "AgentBudget" (
    "projectId" TEXT NOT NULL,
    "scope" "AgentBudgetScope" NOT NULL,
    "unit" "AgentBudgetUnit" NOT NULL,
    "amount" DOUBLE PRECISION NOT NULL,
    "updatedById" TEXT,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "AgentBudget_pkey" PRIMARY KEY ("projectId", "scope")
);

CREATE TABLE "AgentSpend" (
    "projectId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "period" "AgentSpendPeriod" NOT NULL,
    "windowStart" TIMESTAMP(3) NOT NULL,
    "tokens" BIGINT NOT NULL DEFAULT 0,
    "costUsd" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "runs" INTEGER NOT NULL DEFAULT 0,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "AgentSpend_pkey" PRIMARY KEY ("projectId", "userId", "period", "windowStart")
);

CREATE TABLE "AgentDataPolicy" (
    "projectId" TEXT NOT NULL,
    "retentionDays" INTEGER,
    "maskContacts" BOOLEAN NOT NULL DEFAULT false,
    "updatedById" TEXT,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "AgentDataPolicy_pkey" PRIMARY KEY ("projectId")
);

CREATE INDEX "AgentSpend_windowStart_idx" ON "AgentSpend"("windowStart");
-- The retention purge walks a project's conversations by their last activity.
CREATE INDEX "AgentConversation_projectId_updatedAt_idx" ON "AgentConversation"("projectId", "updatedAt");
-- The housekeeping expires pending approvals past their expiry; the waiting list reads a user's.
CREATE INDEX "AgentPendingApproval_status_expiresAt_idx" ON "AgentPendingApproval"("status", "expiresAt");
CREATE INDEX "AgentPendingApproval_userId_status_idx" ON "AgentPendingApproval"("userId", "status");

ALTER TABLE "AgentBudget" ADD CONSTRAINT "AgentBudget_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "AgentSpend" ADD CONSTRAINT "AgentSpend_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "AgentDataPolicy" ADD CONSTRAINT "AgentDataPolicy_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project"("id") ON DELETE CASCADE ON UPDATE CASCADE;
