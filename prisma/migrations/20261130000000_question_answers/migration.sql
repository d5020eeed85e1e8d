-- Questions the assistant asks (`ask_user`) wait in the same rows as approvals (kind
-- `user_question`; the question is the call's `args`). An accepted answer is kept with its row, so a
-- run that stopped before the answer reached the model can still give it as the call's result.
ALTER TABLE "AgentPendingApproval" ADD COLUMN "answer" JSONB;
