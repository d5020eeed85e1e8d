-- Purging consumed override nonces by age scans this index instead of the table.
CREATE INDEX "McpOverrideUse_consumedAt_idx" ON "McpOverrideUse"("consumedAt");
