-- Interrupts have kinds: a pending row says which kind of answer it waits for (a tool approval so
-- far); the kinds are the module's table (interrupt-kinds.ts). Rows written before are approvals.
ALTER TABLE "AgentPendingApproval" ADD COLUMN "kind" TEXT NOT NULL DEFAULT 'tool_approval';
