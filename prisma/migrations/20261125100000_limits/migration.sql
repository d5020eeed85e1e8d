-- The limits store (src/server/limits.ts): one counter per limit key and fixed window. Written with
-- INSERT ... ON CONFLICT ("key", "windowStart") DO UPDATE, so concurrent hits from several app
-- instances never lose an update.
CREATE TABLE "LimitCounter" (
    "key" TEXT NOT NULL,
    "windowStart" TIMESTAMP(3) NOT NULL,
    "count" INTEGER NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "LimitCounter_pkey" PRIMARY KEY ("key", "windowStart")
);

-- The purge deletes expired rows in batches through this index.
CREATE INDEX "LimitCounter_expiresAt_idx" ON "LimitCounter"("expiresAt");
