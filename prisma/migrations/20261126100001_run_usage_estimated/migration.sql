-- Whether a run's tokens and cost include an estimate: the answer was stopped, or failed, while the
-- model was streaming, and that model call reported no usage.
ALTER TABLE "AgentRun" ADD COLUMN "usageEstimated" BOOLEAN NOT NULL DEFAULT false;
