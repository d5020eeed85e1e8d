-- A run survives the death of its instance. The instance running a run holds a lease on it
-- (`owner`, `leaseExpiresAt`, renewed by the heartbeat); any instance claims a RUNNING run whose
-- lease expired, bumping `generation` (a fencing token every write of the run is conditional on).
-- `input` is what the run was asked (so another instance can go on with it), `seqFrom` where its
-- block of row positions starts, `checkpoint*` the last model step whose output is stored (its
-- position in the run's stream, how many steps, the usage of those steps, and whether it was the
-- final one). `cancelRequested`: Stop pressed while no instance ran it.
ALTER TABLE "AgentRun" ADD COLUMN "owner" TEXT;
ALTER TABLE "AgentRun" ADD COLUMN "generation" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "AgentRun" ADD COLUMN "leaseExpiresAt" TIMESTAMP(3);
ALTER TABLE "AgentRun" ADD COLUMN "takeovers" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "AgentRun" ADD COLUMN "cancelRequested" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "AgentRun" ADD COLUMN "input" JSONB;
ALTER TABLE "AgentRun" ADD COLUMN "seqFrom" INTEGER;
-- Positions go past 2^31 (a generation starts at (generation - 1) * 2^32): exact as a double up to 2^53.
ALTER TABLE "AgentRun" ADD COLUMN "checkpointPos" DOUBLE PRECISION;
ALTER TABLE "AgentRun" ADD COLUMN "checkpointSteps" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "AgentRun" ADD COLUMN "checkpointFinal" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "AgentRun" ADD COLUMN "checkpointUsage" JSONB;
CREATE INDEX "AgentRun_status_leaseExpiresAt_idx" ON "AgentRun"("status", "leaseExpiresAt");

-- The tool-call ledger: one row per (run, tool call). The product's own tools write it in the same
-- transaction as their change (a repeat returns the stored result); calls to outside services
-- send its key as Idempotency-Key and record when they started and what they returned.
CREATE TABLE "AgentToolCall" (
    "runId" TEXT NOT NULL,
    "toolCallId" TEXT NOT NULL,
    "toolName" TEXT NOT NULL,
    "argsHash" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "result" JSONB,
    "generation" INTEGER NOT NULL,
    "startedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finishedAt" TIMESTAMP(3),

    CONSTRAINT "AgentToolCall_pkey" PRIMARY KEY ("runId","toolCallId")
);
ALTER TABLE "AgentToolCall" ADD CONSTRAINT "AgentToolCall_runId_fkey" FOREIGN KEY ("runId") REFERENCES "AgentRun"("id") ON DELETE CASCADE ON UPDATE CASCADE;
