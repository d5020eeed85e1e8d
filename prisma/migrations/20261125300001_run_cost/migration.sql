-- What a run cost in US dollars, when prices are configured for its model.
ALTER TABLE "AgentRun" ADD COLUMN "costUsd" DOUBLE PRECISION;
