-- Spend counted in slots. Every run's end added to the same three rows of its windows, the
-- project's month above all, and each such statement held that row's lock until it committed:
-- runs of one project ending together waited for each other, one after another, holding their
-- connections. A window's spend is now the sum of its slots: a run's end adds to a slot that no
-- other transaction holds (`FOR UPDATE SKIP LOCKED`) or opens a new one, so a window has about as
-- many slots as runs of it ever ended at the same moment. Existing counters become slot 0.
ALTER TABLE "AgentSpend" ADD COLUMN "slot" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "AgentSpend" DROP CONSTRAINT "AgentSpend_pkey";
ALTER TABLE "AgentSpend" ADD CONSTRAINT "AgentSpend_pkey" PRIMARY KEY ("projectId", "userId", "period", "windowStart", "slot");
