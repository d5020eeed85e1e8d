-- Why an answer was rated down: values of the module's contract (FeedbackReasonSchema in
-- src/features/in-app-agent/schema.ts), validated before they are stored. Existing ratings have none.
ALTER TABLE "AgentFeedback" ADD COLUMN "reasons" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];
