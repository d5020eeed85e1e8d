-- Files and images attached to assistant messages. An attachment is uploaded first (bound to its
-- user and project only) and bound to a conversation by the run that sends it; it goes with the
-- conversation (cascade) and unbound ones are purged after a day by the retention purge. The bytes
-- live in "AgentAttachmentChunk" (one row per 256 KiB, read one chunk at a time) unless an object
-- store holds them ("storage" = 's3', "storageKey" names the object).
CREATE TABLE "AgentAttachment" (
    "id" TEXT NOT NULL,
    "projectId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "conversationId" TEXT,
    "kind" TEXT NOT NULL,
    "mediaType" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "width" INTEGER,
    "height" INTEGER,
    "pages" INTEGER,
    "sha256" TEXT NOT NULL,
    "storage" TEXT NOT NULL DEFAULT 'db',
    "storageKey" TEXT,
    "chunkCount" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "boundAt" TIMESTAMP(3),
    CONSTRAINT "AgentAttachment_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "AgentAttachmentChunk" (
    "attachmentId" TEXT NOT NULL,
    "index" INTEGER NOT NULL,
    "data" BYTEA NOT NULL,
    CONSTRAINT "AgentAttachmentChunk_pkey" PRIMARY KEY ("attachmentId", "index")
);

CREATE INDEX "AgentAttachment_conversationId_idx" ON "AgentAttachment"("conversationId");
CREATE INDEX "AgentAttachment_userId_projectId_createdAt_idx" ON "AgentAttachment"("userId", "projectId", "createdAt");

ALTER TABLE "AgentAttachment" ADD CONSTRAINT "AgentAttachment_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "AgentAttachment" ADD CONSTRAINT "AgentAttachment_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "AgentAttachment" ADD CONSTRAINT "AgentAttachment_conversationId_fkey" FOREIGN KEY ("conversationId") REFERENCES "AgentConversation"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "AgentAttachmentChunk" ADD CONSTRAINT "AgentAttachmentChunk_attachmentId_fkey" FOREIGN KEY ("attachmentId") REFERENCES "AgentAttachment"("id") ON DELETE CASCADE ON UPDATE CASCADE;
