-- MCP authorization (OAuth 2.1): clients (registered or known by their metadata document), grants
-- (one per authorization; the refresh-token family), authorization codes and tokens, both stored
-- only as SHA-256 hashes. Tool-call audit rows name the OAuth client a call came through.
CREATE TYPE "McpOAuthClientKind" AS ENUM ('REGISTERED', 'METADATA_DOCUMENT');
CREATE TYPE "McpOAuthTokenKind" AS ENUM ('ACCESS', 'REFRESH');

CREATE TABLE "McpOAuthClient" (
    "id" TEXT NOT NULL,
    "kind" "McpOAuthClientKind" NOT NULL,
    "name" TEXT NOT NULL,
    "clientUri" TEXT,
    "redirectUris" TEXT[] NOT NULL,
    "tokenEndpointAuthMethod" TEXT NOT NULL DEFAULT 'none',
    "secretHash" TEXT,
    "metadataExpiresAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "McpOAuthClient_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "McpOAuthGrant" (
    "id" TEXT NOT NULL,
    "clientId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "projectId" TEXT NOT NULL,
    "scopes" TEXT[] NOT NULL,
    "resource" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastUsedAt" TIMESTAMP(3),
    "revokedAt" TIMESTAMP(3),
    CONSTRAINT "McpOAuthGrant_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "McpOAuthCode" (
    "codeHash" TEXT NOT NULL,
    "clientId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "projectId" TEXT NOT NULL,
    "scopes" TEXT[] NOT NULL,
    "resource" TEXT NOT NULL,
    "redirectUri" TEXT NOT NULL,
    "codeChallenge" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "usedAt" TIMESTAMP(3),
    "grantId" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "McpOAuthCode_pkey" PRIMARY KEY ("codeHash")
);

CREATE TABLE "McpOAuthToken" (
    "tokenHash" TEXT NOT NULL,
    "kind" "McpOAuthTokenKind" NOT NULL,
    "grantId" TEXT NOT NULL,
    "scopes" TEXT[] NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "rotatedAt" TIMESTAMP(3),
    "revokedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "McpOAuthToken_pkey" PRIMARY KEY ("tokenHash")
);

ALTER TABLE "ToolCallAudit" ADD COLUMN "oauthGrantId" TEXT;
ALTER TABLE "ToolCallAudit" ADD COLUMN "oauthClientId" TEXT;
ALTER TABLE "ToolCallAudit" ADD COLUMN "oauthClientName" TEXT;

CREATE INDEX "McpOAuthGrant_userId_createdAt_idx" ON "McpOAuthGrant"("userId", "createdAt");
CREATE INDEX "McpOAuthGrant_projectId_createdAt_idx" ON "McpOAuthGrant"("projectId", "createdAt");
CREATE INDEX "McpOAuthGrant_clientId_idx" ON "McpOAuthGrant"("clientId");
CREATE INDEX "McpOAuthCode_expiresAt_idx" ON "McpOAuthCode"("expiresAt");
CREATE INDEX "McpOAuthCode_grantId_idx" ON "McpOAuthCode"("grantId");
CREATE INDEX "McpOAuthToken_grantId_idx" ON "McpOAuthToken"("grantId");
CREATE INDEX "McpOAuthToken_expiresAt_idx" ON "McpOAuthToken"("expiresAt");

ALTER TABLE "McpOAuthGrant" ADD CONSTRAINT "McpOAuthGrant_clientId_fkey" FOREIGN KEY ("clientId") REFERENCES "McpOAuthClient"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "McpOAuthGrant" ADD CONSTRAINT "McpOAuthGrant_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "McpOAuthGrant" ADD CONSTRAINT "McpOAuthGrant_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "McpOAuthCode" ADD CONSTRAINT "McpOAuthCode_clientId_fkey" FOREIGN KEY ("clientId") REFERENCES "McpOAuthClient"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "McpOAuthCode" ADD CONSTRAINT "McpOAuthCode_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "McpOAuthCode" ADD CONSTRAINT "McpOAuthCode_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "McpOAuthCode" ADD CONSTRAINT "McpOAuthCode_grantId_fkey" FOREIGN KEY ("grantId") REFERENCES "McpOAuthGrant"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "McpOAuthToken" ADD CONSTRAINT "McpOAuthToken_grantId_fkey" FOREIGN KEY ("grantId") REFERENCES "McpOAuthGrant"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "ToolCallAudit" ADD CONSTRAINT "ToolCallAudit_oauthGrantId_fkey" FOREIGN KEY ("oauthGrantId") REFERENCES "McpOAuthGrant"("id") ON DELETE SET NULL ON UPDATE CASCADE;
