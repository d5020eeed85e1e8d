-- Questions the MCP server asks a client during a tool call (elicitation): the request goes out on
-- the tool call's stream, the answer comes back as a POST of its own, possibly to another instance.
-- A row is where the answer waits for the call that asked; the call deletes it when it ends.
CREATE TABLE "McpElicitation" (
    "id" TEXT NOT NULL,
    "principal" TEXT NOT NULL,
    "response" JSONB,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "McpElicitation_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "McpElicitation_expiresAt_idx" ON "McpElicitation"("expiresAt");
